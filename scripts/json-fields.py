#!/usr/bin/env python3
"""Prints the named top-level fields of one `mats solve --json` answer (read from stdin) as a
CSV row, for the study scripts; missing fields print empty, unreadable input prints an empty
row of as many fields, so a failed run still leaves its line in the table."""
import json
import sys

fields = sys.argv[1:]
try:
    answer = json.load(sys.stdin)
    print(",".join("" if answer.get(f) is None else str(answer[f]) for f in fields))
except (ValueError, AttributeError):
    print("," * (len(fields) - 1))
