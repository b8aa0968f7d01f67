#!/usr/bin/env bash
# Builds the fuzz targets (libFuzzer with AddressSanitizer, from the toolchain) and runs
# each for SECONDS (default 60): the whole pipeline, patterns, JSON contexts, the code
# scanner of `flags refs`, `flags import` of other systems' files, and the request parser
# of `flags serve`.
#
#   Tests/Fuzz/run.sh [SECONDS] [pipeline|pattern|context|code|import|http ...]
#
# Each target is the library's sources compiled with one harness as a single module. A
# finding is written to .build/fuzz/findings/TARGET-*; make it a regression test.
# FUZZ_OPTIMIZATION=-Onone builds in a third of the time and runs inputs a few times
# slower: CI's short smoke run uses it; a long run keeps the default, -O. FUZZ_JOBS=N
# compiles with N jobs (default: one per core): CI builds on one core beside other work.
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-60}
shift || true
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=(pipeline pattern context code import http)
out=.build/fuzz
mkdir -p "$out/findings"
export SWIFT_BACKTRACE=enable=no
# The language's syntax, the library, its tooling (the formatter, the importers) and the
# server's HTTP messages as one module: the copies, in $out/sources, leave out their
# imports of each other.
modules=(Sources/FlagRulesSyntax Sources/FlagRules Sources/FlagRulesKeys Sources/FlagRulesTooling)
rm -rf "$out/tooling" "$out/sources"
mkdir -p "$out/sources"
for file in $(find "${modules[@]}" -name '*.swift') Sources/FlagRulesServer/Transport/HTTPMessage.swift; do
  copy="$out/sources/$(basename "$(dirname "$file")")-$(basename "$file")"
  grep -Ev '^(@_exported )?import FlagRules(Syntax|Keys)?$' "$file" > "$copy"
done
sources="$(find "$out/sources" -name '*.swift')"
harnesses=(Tests/Fuzz/*.swift)
for target in "${targets[@]}"; do
  case $target in
    pipeline | pattern | context | code | import | http) ;;
    *) echo "unknown target '$target' (pipeline, pattern, context, code, import or http)" >&2; exit 2 ;;
  esac
done
# One binary holds the targets (FLAGRULES_FUZZ_TARGET picks one): the library is
# compiled with the sanitizers once.
optimization=${FUZZ_OPTIMIZATION:--O}
case $optimization in
  -O | -Onone) ;;
  *) echo "FUZZ_OPTIMIZATION is -O or -Onone, not '$optimization'" >&2; exit 2 ;;
esac
binary=$out/fuzz$optimization
if [[ ! -x $binary || -n $(find Tests/Fuzz "${modules[@]}" Sources/FlagRulesAtomics Sources/FlagRulesServer/Transport/HTTPMessage.swift -newer "$binary" -name '*.[sch]*') ]]; then
  echo "== building the fuzz targets ($optimization)"
  # shellcheck disable=SC2086
  jobs=()
  [[ -n ${FUZZ_JOBS:-} ]] && jobs=(-j "$FUZZ_JOBS")
  swiftc "${jobs[@]}" -swift-version 6 "$optimization" -sanitize=fuzzer,address -parse-as-library -module-name FlagRules -package-name FlagRules \
    -I Sources/FlagRulesAtomics/include \
    $sources "${harnesses[@]}" -o "$binary"
fi
for target in "${targets[@]}"; do
  corpus=$out/corpus-$target
  mkdir -p "$corpus"
  cp -n Tests/Fuzz/corpus/$target/* "$corpus/" 2>/dev/null || true
  # FUZZ_RUNS=N runs N inputs from a fixed seed instead (a repeatable smoke run, for CI).
  limit=(-max_total_time="$seconds")
  description="for ${seconds}s"
  [[ -n ${FUZZ_RUNS:-} ]] && limit=(-runs="$FUZZ_RUNS" -seed=1) && description="on $FUZZ_RUNS inputs from seed 1"
  echo "== fuzzing $target $description"
  FLAGRULES_FUZZ_TARGET=$target "$binary" "$corpus" "${limit[@]}" -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
    -dict=Tests/Fuzz/flags.dict -artifact_prefix="$out/findings/$target-" -print_final_stats=1 2>&1 | tail -n 14
done
