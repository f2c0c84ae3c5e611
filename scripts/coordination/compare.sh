#!/usr/bin/env bash
# Compare each team's results in HEAD_DIR with the same team's in BASE_DIR (folders as `coordbench demo
# --output-dir` writes them: <team>/results.json), append the comparisons to SUMMARY (Markdown: GitHub's
# $GITHUB_STEP_SUMMARY), and exit 1 when one of them breaks a FAIL_ON rule (2 on bad input).
#
# usage: compare.sh BASE_DIR HEAD_DIR SUMMARY
# env:   COORDBENCH (the command; default: coordbench), FAIL_ON (default below)
set -euo pipefail

base=${1:?usage: compare.sh BASE_DIR HEAD_DIR SUMMARY}
head=${2:?usage: compare.sh BASE_DIR HEAD_DIR SUMMARY}
summary=${3:?usage: compare.sh BASE_DIR HEAD_DIR SUMMARY}
coordbench=${COORDBENCH:-coordbench}
fail_on=${FAIL_ON:-score<-0.05,coordination<-0.05,new:*}

if [ ! -d "$base" ]; then
  echo "No stored results to compare with (${base} is missing): nothing to compare." >> "$summary"
  exit 0
fi
status=0
compared=0
for results in "$head"/*/results.json; do
  [ -f "$results" ] || continue
  team=$(basename "$(dirname "$results")")
  [ "$team" = green ] && continue  # the green's own copy of its newest assessment
  if [ ! -f "$base/$team/results.json" ]; then
    echo "Team ${team}: new, no stored results to compare with." >> "$summary"
    continue
  fi
  page=$(mktemp)
  code=0
  "$coordbench" compare "$base/$team/results.json" "$results" --fail-on "$fail_on" --markdown "$page" || code=$?
  if [ "$code" -eq 2 ]; then
    rm -f "$page"
    exit 2
  fi
  { echo "## Team ${team}"; cat "$page"; } >> "$summary"
  rm -f "$page"
  [ "$code" -eq 0 ] || status=1
  compared=$((compared + 1))
done
echo "Compared ${compared} team(s); $([ "$status" -eq 0 ] && echo "no regression" || echo "regression found")."
exit "$status"
