#!/usr/bin/env bash
# Runs a test of the real daemon that compares its verdicts with `newsflow replay` N times and
# counts the runs whose verdicts differ on any article (issue 50: a verdict must not depend on
# timing). Too long for the test suite: a measurement, run by hand, under load if wanted.
#
#   tests/bench/repeat_verdicts.sh N TEST [BUILD_DIR]
#
# TEST is a script of tests/integration (roles_test.sh, sigkill_test.sh, standby_test.sh,
# backlog_replay_test.sh, ...). Each run's output goes to BUILD_DIR/repeat-verdicts/TEST.N.log;
# the summary line of compare_runs.py (same_verdict, dup F1, B-cubed) is printed per run; a
# run differs unless every verdict and every story is replay's.
set -uo pipefail
n=${1:?runs}; test=${2:?test script}; build=${3:-build}
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "$build" && pwd)
out=$build/repeat-verdicts; mkdir -p "$out"
export NEWSFLOW_BIN=${NEWSFLOW_BIN:-$build/newsflow}
differ=0 failed=0
for i in $(seq "$n"); do
  log=$out/${test%.sh}.$i.log
  start=$(date +%s)
  bash "$src/tests/integration/$test" "$src" "$out/run" > "$log" 2>&1
  rc=$?
  summary=$(grep -E 'same_verdict' "$log" | tail -1)
  if [ $rc -ne 0 ]; then failed=$((failed + 1)); fi
  # Every verdict and every story as replay's.
  case "$summary" in
    *"story_bcubed P=1.0000 R=1.0000 F1=1.0000 same_verdict=1.0000"*) ;;
    *)
      differ=$((differ + 1))
      # Kept for a look at which articles differ (compare_runs.py --list).
      rm -rf "$out/run.$i"; cp -r "$out/run" "$out/run.$i"
      ;;
  esac
  echo "run $i: exit $rc, $(( $(date +%s) - start )) s: ${summary:-no comparison printed}"
done
echo "$test: $n runs, $differ differing from replay (a verdict or a story), $failed failed"
