# bench/results_lib.bash - the structured outputs of the benches that feed a plot (bench/plot.sh):
# one TSV a bench under bench/results/ (BENCH_RESULTS overrides the directory; BENCH_RESULTS=none
# writes nothing), beside the human tables the bench prints as before. A TSV is
#   # <what the file holds>                      comment lines first (gnuplot and awk skip them):
#   # command: <the bench's command line>         how it was made, so that a rerun regenerates it
#   # commit: <short hash, +dirty if the tree had changes>
#   # date: <UTC, ISO 8601>
#   # load: <1/5/15-minute load average when the file was written>
#   COL1<TAB>COL2...                              one header line naming the columns
#   v1<TAB>v2...                                  then one row per line
# Sourced by bench/*.sh (and tests/e2e/soak.sh) after ROOT is set:
#   bench_tsv_begin NAME "WHAT" "COMMAND" COL...   starts $BENCH_RESULTS/NAME.tsv (the temporary file
#                                                  $BENCH_TSV_TMP until bench_tsv_end, empty when
#                                                  nothing is written); no COL: the caller appends
#                                                  the header line itself; prints nothing
#   bench_tsv_row V...                             appends one row (values joined by tabs)
#   bench_tsv_end                                  moves the file into place and says where it went
# A bench that fails before bench_tsv_end leaves the committed file as it was (and its temporary
# file in TMPDIR).

BENCH_TSV_FILE=
BENCH_TSV_TMP=

bench_tsv_begin() {
  local name=$1 what=$2 cmd=$3 dir=${BENCH_RESULTS:-$ROOT/bench/results} commit
  shift 3
  BENCH_TSV_FILE= BENCH_TSV_TMP=
  [ "$dir" != none ] || return 0
  mkdir -p "$dir" || return 1
  commit=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)
  [ -z "$(git -C "$ROOT" status --porcelain --untracked-files=no 2>/dev/null)" ] || commit="$commit+dirty"
  BENCH_TSV_FILE=$dir/$name.tsv
  BENCH_TSV_TMP=$(mktemp "${TMPDIR:-/tmp}/bench-$name.XXXXXX") || return 1
  {
    echo "# $what"
    echo "# command: $cmd"
    echo "# commit: $commit"
    echo "# date: $(date -u +%Y-%m-%dT%H:%MZ)"
    echo "# load: $(cut -d' ' -f1-3 /proc/loadavg)"
    [ $# = 0 ] || (IFS=$'\t'; echo "$*")
  } >"$BENCH_TSV_TMP"
}

bench_tsv_row() {
  [ -n "$BENCH_TSV_TMP" ] || return 0
  (IFS=$'\t'; echo "$*") >>"$BENCH_TSV_TMP"
}

bench_tsv_end() {
  [ -n "$BENCH_TSV_TMP" ] || return 0
  mv -f "$BENCH_TSV_TMP" "$BENCH_TSV_FILE" && chmod 0644 "$BENCH_TSV_FILE" &&
    echo "   (TSV for bench/plot.sh: ${BENCH_TSV_FILE#"$ROOT"/})"
  BENCH_TSV_TMP=
}
