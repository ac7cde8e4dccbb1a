#!/usr/bin/env bash
# The one-way rule of ../shared/DESIGN.md section 2 on includes and, given the target graph of a
# configured build (--graph BUILD/tessel_link_graph.tsv), on link targets: see check_layering.py.
#   usage: check-layering.sh [--graph FILE] [ROOT]
exec python3 "$(dirname "$0")/check_layering.py" "$@"
