#!/usr/bin/env bash
# The mutation run (docs/mutation.md): plants each bug of tests/mutation/mutants.txt alone into
# the source, rebuilds only the targets its area's tests live in (Release preset), runs those
# tests, and puts the source back. A mutant is killed when a test fails, survives when all pass;
# a mutant whose anchor text no longer occurs exactly once is STALE (the code moved: fix the
# table), one whose source no longer compiles is reported as such, not counted as killed.
#
#   bash scripts/mutation.sh                 every mutant
#   bash scripts/mutation.sh NAME...         only these (names as in the table)
#   MUTATION_JOBS=2 bash scripts/mutation.sh (build and ctest parallelism; default 2)
#   MUTATION_EVERY_TEST=1 bash scripts/mutation.sh NAME  (run all the area's tests, to list every
#                                            test that kills the mutant; default: stop at the first)
#
# Needs a configured Release tree (cmake --preset release). Prints one line per mutant and the
# score per area; exits 1 when a mutant survives or is stale, so it can gate a change.
set -uo pipefail
cd "$(dirname "$0")/.."
table=tests/mutation/mutants.txt
jobs=${MUTATION_JOBS:-2}
stop=--stop-on-failure
[ -n "${MUTATION_EVERY_TEST:-}" ] && stop=""
log=build/release/mutation
mkdir -p "$log"

[ -f build/release/build.ninja ] || { echo "mutation: configure first: cmake --preset release" >&2; exit 2; }

# Reads the table into parallel arrays; each record is
#   === name
#   area: ...  file: ...  tests: <ctest regex>  targets: <build targets>  [env: VAR=value ...]
#   --- find
#   <text that must occur exactly once in file>
#   --- replace
#   <its replacement>
# Each text ends at the first empty line (so neither may hold one).
names=() areas=() files=() tests=() targets=() envs=() finds=() replaces=()
parse() {
  local name="" section="" line find="" replace="" area="" file="" test="" target="" env=""
  flush() {
    [ -z "$name" ] && return
    names+=("$name") areas+=("$area") files+=("$file") tests+=("$test") targets+=("$target")
    envs+=("$env")
    finds+=("${find%$'\n'}") replaces+=("${replace%$'\n'}")
  }
  while IFS= read -r line || [ -n "$line" ]; do
    case "$section:$line" in
      *:"=== "*) flush; name=${line#=== }; section=head; find="" replace="" area="" file="" test="" target="" env="" ;;
      head:"#"*|head:"") ;;
      head:"area: "*) area=${line#area: } ;;
      head:"file: "*) file=${line#file: } ;;
      head:"tests: "*) test=${line#tests: } ;;
      head:"targets: "*) target=${line#targets: } ;;
      head:"env: "*) env=${line#env: } ;;
      head:"why: "*) ;;
      *:"--- find") section=find ;;
      *:"--- replace") section=replace ;;
      find:|replace:) section="" ;;
      find:*) find+="$line"$'\n' ;;
      replace:*) replace+="$line"$'\n' ;;
      :"#"*|:"") ;;
      *) echo "mutation: $table: cannot read line: $line" >&2; exit 2 ;;
    esac
  done < "$table"
  flush
}
parse

wanted=("$@")
selected() {
  [ ${#wanted[@]} -eq 0 ] && return 0
  local w
  for w in "${wanted[@]}"; do [ "$w" = "$1" ] && return 0; done
  return 1
}

# The file being mutated and its original bytes, put back on any exit.
current="" backup="$log/original"
restore() { [ -n "$current" ] && cp "$backup" "$current" && current=""; }
trap 'restore; exit 130' INT TERM
trap restore EXIT

declare -A killed total
results=()
start_all=$SECONDS
for i in "${!names[@]}"; do
  name=${names[$i]} area=${areas[$i]} file=${files[$i]}
  selected "$name" || continue
  total[$area]=$(( ${total[$area]:-0} + 1 ))
  t0=$SECONDS
  content=$(cat "$file"; printf x)
  content=${content%x}
  find=${finds[$i]}
  after=${content#*"$find"}
  if [[ $content != *"$find"* ]] || [[ $after == *"$find"* ]]; then
    verdict="STALE (anchor found $([[ $content != *"$find"* ]] && echo 0 || echo '2+') times in $file)"
  else
    cp "$file" "$backup"
    current=$file
    printf '%s' "${content/"$find"/"${replaces[$i]}"}" > "$file"
    # shellcheck disable=SC2086
    if ! cmake --build --preset release -j "$jobs" --target ${targets[$i]} > "$log/$name.build.log" 2>&1; then
      verdict="BUILD FAILED (see $log/$name.build.log)"
    # shellcheck disable=SC2086
    elif env ${envs[$i]} ctest --preset release -R "${tests[$i]}" -E '\.Catches' -j "$jobs" \
        $stop --timeout 600 > "$log/$name.test.log" 2>&1; then
      if grep -q "No tests were found" "$log/$name.test.log"; then
        verdict="NO TESTS match '${tests[$i]}'"
      else
        verdict="SURVIVED"
      fi
    else
      failed=$(grep -oE '[0-9]+ - [^ ]+ \((Failed|Timeout|SEGFAULT|Subprocess aborted|Exception)' \
                 "$log/$name.test.log" | sed -E 's/^[0-9]+ - //; s/ \(.*//' | paste -sd ' ')
      verdict="killed by ${failed:-a failing test}"
      killed[$area]=$(( ${killed[$area]:-0} + 1 ))
    fi
    restore
  fi
  line=$(printf '%-28s %-9s %4ss  %s' "$name" "$area" $(( SECONDS - t0 )) "$verdict")
  echo "$line"
  results+=("$line")
done

# Put the build back as the source is.
all_targets=$(printf '%s\n' "${targets[@]}" | tr ' ' '\n' | sort -u | tr '\n' ' ')
# shellcheck disable=SC2086
cmake --build --preset release -j "$jobs" --target $all_targets > "$log/restore.build.log" 2>&1 ||
  echo "mutation: rebuilding the unmutated targets failed (see $log/restore.build.log)" >&2

echo
echo "score per area (killed / mutants):"
bad=0
for a in $(printf '%s\n' "${!total[@]}" | sort); do
  printf '  %-9s %d / %d\n' "$a" "${killed[$a]:-0}" "${total[$a]}"
  [ "${killed[$a]:-0}" -eq "${total[$a]}" ] || bad=1
done
echo "total time: $(( SECONDS - start_all ))s"
exit $bad
