#!/usr/bin/env python3
"""Prints the named fields of one `mats solve --json` answer (read from stdin) as a CSV row, for
the study scripts; a dotted name reads a nested field (`gpu.adaptation`); missing fields print
empty, a value with a comma is quoted, and unreadable input prints an empty row of as many
fields, so a failed run still leaves its line in the table."""
import csv
import json
import sys


def field(answer, name):
    for key in name.split("."):
        answer = answer.get(key) if isinstance(answer, dict) else None
    return "" if answer is None else str(answer)


fields = sys.argv[1:]
try:
    answer = json.load(sys.stdin)
    row = [field(answer, f) for f in fields]
except ValueError:
    row = [""] * len(fields)
csv.writer(sys.stdout, lineterminator="\n").writerow(row)
