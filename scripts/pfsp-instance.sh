# Sourced by the flowshop scripts that run on the GPU machine: looks a Taillard name (ta101) or a
# VRF one (VFR800_60_1) up in the taillard-pfsp folder's tables.
#
#   pfsp_instance DATA NAME
#
# sets file (the instance file), pick (the `mats solve` arguments that select it: --index for
# Taillard's files of ten), spec (file:index or file), n, m and bks; an unknown name is an error.
pfsp_instance() {
    local data=$1 name=$2 row index
    row=$(awk -F, -v n="$name" '$1 == n { print $5 "," $6 "," $2 "," $3 "," $7 }' "$data/bks.csv")
    if [ -n "$row" ]; then
        IFS=, read -r file index n m bks <<< "$row"
        file=$data/$file
        pick=(--index "$index")
        spec=$file:$index
    else
        row=$(awk -F, -v n="$name" '$1 == n { print $6 "," $3 "," $4 "," $7 }' "$data/vrf/bks.csv")
        [ -n "$row" ] || { echo "unknown instance $name (not in $data/bks.csv or $data/vrf/bks.csv)" >&2; return 1; }
        IFS=, read -r file n m bks <<< "$row"
        file=$data/vrf/$file
        pick=()
        spec=$file
    fi
}
