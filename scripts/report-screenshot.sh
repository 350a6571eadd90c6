#!/usr/bin/env bash
# Screenshot a mats report (index.html) with headless Chromium, to look at what a user sees.
#
#   scripts/report-screenshot.sh REPORT_DIR [OUT.png] [WIDTHxHEIGHT]
#   scripts/report-screenshot.sh --demo [OUT.png]      # render the synthetic report first
#
# Needs Debian's `chromium` package (apt-get install -y chromium). Not run in CI.
set -euo pipefail

if [[ "${1:-}" == "--demo" ]]; then
    dir="${CARGO_TARGET_DIR:-target}/demo-report"
    cargo run -q -p mats-reports --example demo_report -- "$dir" png
    shift
    set -- "$dir" "$@"
fi

dir="${1:?usage: $0 REPORT_DIR [OUT.png] [WIDTHxHEIGHT] | --demo [OUT.png]}"
out="${2:-$dir/screenshot.png}"
size="${3:-1400x4000}"
index="$(realpath "$dir/index.html")"
[[ -f "$index" ]] || { echo "no index.html in $dir" >&2; exit 1; }

browser="$(command -v chromium || command -v chromium-browser || true)"
[[ -n "$browser" ]] || { echo "chromium not found: apt-get install -y chromium" >&2; exit 1; }

# --no-sandbox: containers usually run this as root, where Chromium's sandbox refuses to start.
# --allow-file-access-from-files: the page's images are sibling files of index.html.
# --virtual-time-budget: let the images load before the screenshot is taken.
"$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars \
    --allow-file-access-from-files --virtual-time-budget=5000 \
    --screenshot="$(realpath -m "$out")" --window-size="${size/x/,}" \
    "file://$index" 2>/dev/null
echo "$out"
