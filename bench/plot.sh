#!/usr/bin/env bash
# bench/plot.sh - the benchmarks' pictures: bench/results/*.tsv (written by the benches, see
# bench/results_lib.bash) -> PNGs under docs/img/, drawn by gnuplot (Debian gnuplot-nox, `make
# deps`; pngcairo). `make plots` runs it. Each plot names its data, and its TSVs' commit, date
# and load, in its bottom corner.
#   launch_k8s.png     bench/results/launch_k8s.tsv          launch time against N: our holder,
#                                                            OpenSSH, kubectl exec and the two floors
#   launch_k8s-nodes3.png bench/results/launch_k8s-nodes3.tsv  the same at N = 32..128 on 3 nodes
#   launch_kubesim.png bench/results/launch_kubesim.tsv      the same on kubesim (bench/agent.sh 2):
#                                                            mpi-rsh, kubectl exec and the floor
#   peer_operator.png  bench/results/peer_operator-*.tsv     our operator's peak RSS and API requests
#                                                            per job against upstream's, per N
#   soak.png           bench/results/soak.tsv                the 2-hour soak's RSS over time
#   launch_phases.png  bench/results/launch_phases.tsv       one MPIJob's launch phases, as bars
# Usage: bench/plot.sh [-r RESULTS_DIR] [-o OUT_DIR]   (defaults bench/results, docs/img)
#        bench/plot.sh --list   prints "PNG TSV-GLOB COLUMN..." per plot: the columns it reads
# Exit 0 when every PNG was written; 1 naming the TSV that is missing or lacks a column; 2 when
# gnuplot is not installed.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
RES=$ROOT/bench/results
OUT=$ROOT/docs/img

# the plots: PNG, its TSVs (a glob under RES), the header columns it reads
PLOTS=(
  "launch_k8s.png launch_k8s.tsv N way last_rank_ms"
  "launch_k8s-nodes3.png launch_k8s-nodes3.tsv N way last_rank_ms"
  "launch_kubesim.png launch_kubesim.tsv N way last_rank_ms"
  "peer_operator.png peer_operator-*.tsv N operator peak_rss_mb req_per_job"
  "soak.png soak.tsv min_lo min_hi operator_mib apiserver_mib etcd_mib"
  "launch_phases.png launch_phases.tsv phase at_s"
)
while [ $# -gt 0 ]; do
  case $1 in
    --list) printf '%s\n' "${PLOTS[@]}"; exit 0 ;;
    -r) RES=$2; shift 2 ;;
    -o) OUT=$2; shift 2 ;;
    *) echo "usage: bench/plot.sh [-r RESULTS_DIR] [-o OUT_DIR] | --list" >&2; exit 2 ;;
  esac
done
command -v gnuplot >/dev/null || { echo "bench/plot.sh: gnuplot not found (make deps installs gnuplot-nox)" >&2; exit 2; }
mkdir -p "$OUT"
T=$(mktemp -d /tmp/plot-XXXXXX)
trap 'rm -rf "$T"' EXIT

# meta FILE KEY: the value of FILE's "# KEY: ..." provenance line (empty if none)
meta() { sed -n "s/^# $2: //p" "$1" | head -n1; }
# cols FILE COL...: the named columns of FILE's rows, tab-separated, in the order asked; fails
# naming the first column its header lacks
cols() {
  local f=$1
  shift
  awk -F'\t' -v want="$*" -v f="$f" '
    /^#/ || NF == 0 { next }
    !h { h = 1; n = split(want, w, " "); for (i = 1; i <= NF; i++) idx[$i] = i
         for (i = 1; i <= n; i++) if (!(w[i] in idx)) { print f ": no column " w[i] > "/dev/stderr"; bad = 1; exit 1 }
         next }
    { line = ""; for (i = 1; i <= n; i++) line = line (i > 1 ? "\t" : "") $(idx[w[i]]); print line }
    END { if (!h && !bad) { print f ": no header line" > "/dev/stderr"; exit 1 } }' "$f"
}
# source_of FILE...: "data: NAMES; commit C, date D, load L" for the corner
source_of() {
  local f s=
  for f in "$@"; do
    s+="${s:+; }$(basename "$f"): commit $(meta "$f" commit | cut -d' ' -f1), $(meta "$f" date), load $(meta "$f" load | sed 's/ (.*//; s/^\([0-9.]*\) .*/\1/')"
  done
  printf 'data: bench/results/ %s' "$s" | sed 's/"/\\"/g'
}
need() { [ -f "$1" ] || { echo "bench/plot.sh: $1 missing (run its bench, see docs/plots.md)" >&2; exit 1; }; }
PREAMBLE='set terminal pngcairo size 1000,600 noenhanced font "DejaVu Sans,11" linewidth 1.5
set datafile separator "\t"
set grid lw 0.5 lc rgb "#dddddd"
set border lw 1
set key noenhanced'

# plot_launch NAME OURS WHERE: launch time against N from NAME.tsv (N, way, last_rank_ms), OURS
# (the way of ours) drawn bold and labelled with its times; WHERE for the title
plot_launch() {
  local name=$1 ours=$2 where=$3 f=$RES/$1.tsv png=$OUT/$1.png w
  need "$f"
  cols "$f" N way last_rank_ms >"$T/launch" || exit 1
  local plots=() style
  for w in $(cut -f2 "$T/launch" | awk '!s[$0]++'); do
    awk -F'\t' -v w="$w" '$2 == w {print $1 "\t" $3}' "$T/launch" | sort -n >"$T/launch-$w"
    case $w in
      nsenter) style='dt 2 lw 2 lc rgb "#777777" pt 6 ps 1.3 title "nsenter: the floor (namespaces entered directly)"' ;;
      crictl) style='dt 4 lw 2 lc rgb "#aaaaaa" pt 8 ps 1.3 title "crictl exec: the CRI floor (containerd, no API server)"' ;;
      holder) style='lw 4 lc rgb "#1f77b4" pt 7 ps 1.6 title "ours: mpi-rsh under mpi-rsh-holder (exec API)"' ;;
      mpi-rsh) style='lw 4 lc rgb "#1f77b4" pt 7 ps 1.6 title "ours: mpi-rsh, one process per worker (exec API)"' ;;
      ssh) style='lw 2 lc rgb "#d62728" pt 5 ps 1.3 title "upstream v2beta1: OpenSSH to sshd in the workers"' ;;
      kubexec) style='lw 2 lc rgb "#ff7f0e" pt 9 ps 1.5 title "the seed (v1alpha2): kubectl exec"' ;;
      *) style="lw 2 title \"$w\"" ;;
    esac
    plots+=("\"$T/launch-$w\" using 1:2 with linespoints $style")
  done
  [ ! -s "$T/launch-$ours" ] ||
    plots+=("\"$T/launch-$ours\" using 1:2:(sprintf(\"%d ms\", \$2)) with labels offset 0,-1.2 font \",10\" tc rgb \"#1f77b4\" notitle")
  local IFS=,
  gnuplot <<EOF
$PREAMBLE
set output "$png"
set title "Launch $where: mpirun -np N hostname over N worker pods (medians)"
set xlabel "N (ranks, one per worker pod; log scale)"
set ylabel "time until every rank has printed (ms, log scale)"
set logscale xy 2
set xtics ($(cut -f1 "$T/launch" | sort -nu | awk '{printf "%s\"%s\" %s", (NR > 1 ? "," : ""), $1, $1}'))
set xrange [$(cut -f1 "$T/launch" | sort -n | awk 'NR == 1 {lo = $1} {hi = $1} END {print lo * 0.85 ":" hi * 1.19}')]
set yrange [$(cut -f3 "$T/launch" | grep -v nan | sort -g | awk 'NR == 1 {lo = $1} {hi = $1} END {print lo * 0.7 ":" hi * 2}')]
set key top left box opaque font ",10"
set label 1 "$(source_of "$f")" at screen 0.99, 0.015 right font ",8" tc rgb "#555555"
set bmargin 4.5
plot ${plots[*]}
EOF
}

plot_peer() {
  local png=$OUT/peer_operator.png files=() f
  # in N's order (peer_operator-200 before peer_operator-1000)
  while IFS= read -r f; do files+=("$f"); done < <(printf '%s\n' "$RES"/peer_operator-*.tsv | sort -V)
  for f in "${files[@]}"; do need "$f"; done
  : >"$T/peer"
  for f in "${files[@]}"; do cols "$f" N operator peak_rss_mb req_per_job >>"$T/peer" || exit 1; done
  # one row per N: N, upstream's RSS, ours, upstream's requests per job, ours
  awk -F'\t' '{ n[$1] = 1; v[$1, $2, "rss"] = $3; v[$1, $2, "req"] = $4 }
    END { for (k in n) print k "\t" v[k, "upstream", "rss"] "\t" v[k, "ours", "rss"] "\t" v[k, "upstream", "req"] "\t" v[k, "ours", "req"] }' \
    "$T/peer" | sort -n >"$T/peer-n"
  awk -F'\t' '$2 == "" || $3 == "" || $4 == "" || $5 == "" { print "bench/plot.sh: peer_operator: N=" $1 " lacks upstream or ours" > "/dev/stderr"; exit 1 }' "$T/peer-n"
  gnuplot <<EOF
$PREAMBLE
set output "$png"
set multiplot layout 1,2 title "The operator beside upstream's (v0.6.0) on a real API server: N MPIJobs created at once, pods held Pending" font ",12"
set style data histogram
set style histogram clustered gap 1.5
set style fill solid 0.85 border rgb "#333333"
set boxwidth 0.9
set xtics scale 0
set xrange [-0.6:$(($(wc -l <"$T/peer-n") - 1)).6]
set grid noxtics
set key top left font ",10"
set bmargin 5
set xlabel "MPIJobs (N)"
set title "operator memory: peak anonymous RSS"
set ylabel "MiB (memory.stat total_rss, sampled 1/s)"
set yrange [0:*]
set offsets 0, 0, graph 0.12, 0
plot "$T/peer-n" using 2:xtic(sprintf("N = %d", \$1)) lc rgb "#d62728" title "upstream", \
     "" using 3 lc rgb "#1f77b4" title "ours", \
     "" using (\$0 - 0.17):2:(sprintf("%.1f", \$2)) with labels offset 0,0.8 font ",10" notitle, \
     "" using (\$0 + 0.17):3:(sprintf("%.1f", \$3)) with labels offset 0,0.8 font ",10" notitle
set title "operator API requests per MPIJob"
set ylabel "requests / job (the API server's APF count)"
set label 1 "$(source_of "${files[@]}")" at screen 0.99, 0.015 right font ",7" tc rgb "#555555"
plot "$T/peer-n" using 4:xtic(sprintf("N = %d", \$1)) lc rgb "#d62728" title "upstream", \
     "" using 5 lc rgb "#1f77b4" title "ours", \
     "" using (\$0 - 0.17):4:(sprintf("%.1f", \$4)) with labels offset 0,0.8 font ",10" notitle, \
     "" using (\$0 + 0.17):5:(sprintf("%.1f", \$5)) with labels offset 0,0.8 font ",10" notitle
unset multiplot
EOF
}

plot_soak() {
  local f=$RES/soak.tsv png=$OUT/soak.png
  need "$f"
  cols "$f" min_lo min_hi operator_mib apiserver_mib etcd_mib >"$T/soak" || exit 1
  gnuplot <<EOF
$PREAMBLE
set output "$png"
set multiplot layout 2,1 title "The soak on the real cluster: rounds of 3 MPIJobs (succeeds, fails, deleted) for 2 hours; median RSS per bucket" font ",12"
set xrange [0:*]
set yrange [0:*]
set key bottom right font ",10" box opaque
set lmargin 12
set tmargin 3
set title "the operator"
set ylabel "RSS (MiB)"
set offsets 0, 0, graph 0.15, 0
plot "$T/soak" using ((\$1 + \$2) / 2):3:1:2 with xerrorbars lw 3 pt 7 ps 1.3 lc rgb "#1f77b4" title "mpi-operator: each bucket's median over its minutes", \
     "" using ((\$1 + \$2) / 2):3:(sprintf("%.1f", \$3)) with labels offset 0,1 font ",9" notitle
set title "the API server and etcd (reported, not judged)"
set xlabel "minutes since the soak's start"
set key center right
set label 1 "$(source_of "$f")" at screen 0.99, 0.012 right font ",8" tc rgb "#555555"
set bmargin 4.5
plot "$T/soak" using ((\$1 + \$2) / 2):4:1:2 with xerrorbars lw 3 pt 5 ps 1.2 lc rgb "#d62728" title "kube-apiserver", \
     "" using ((\$1 + \$2) / 2):5:1:2 with xerrorbars lw 3 pt 9 ps 1.3 lc rgb "#2ca02c" title "etcd", \
     "" using ((\$1 + \$2) / 2):4:(sprintf("%.0f", \$4)) with labels offset 0,1 font ",9" notitle, \
     "" using ((\$1 + \$2) / 2):5:(sprintf("%.0f", \$5)) with labels offset 0,1 font ",9" notitle
unset multiplot
EOF
}

plot_phases() {
  local f=$RES/launch_phases.tsv png=$OUT/launch_phases.png
  need "$f"
  cols "$f" phase at_s | sort -t$'\t' -s -k2,2g >"$T/phases" || exit 1
  # one bar per phase after the first: from the previous phase's time to its own (row 0 on top)
  awk -F'\t' 'NR == 1 { prev = $2; next } { printf "%d\t%s\t%s\t%s\n", NR - 2, $1, prev, $2; prev = $2 }' "$T/phases" >"$T/bars"
  local n
  n=$(wc -l <"$T/bars")
  [ "$n" -ge 1 ] || { echo "bench/plot.sh: $f: fewer than 2 phases" >&2; exit 1; }
  gnuplot <<EOF
$PREAMBLE
set output "$png"
set title "One MPIJob's launch (status.launchPhases): each bar runs from the previous phase to this one"
set xlabel "seconds after the MPIJob's creation\n(Kubernetes' timestamps, created to launcherStarted: whole seconds; the agent's phases: ms)" font ",10"
set ylabel ""
set yrange [$n - 0.4:-0.6]
set ytics noenhanced
set ytics ($(awk -F'\t' '{printf "%s\"%s\" %s", (NR > 1 ? "," : ""), $2, $1}' "$T/bars")) scale 0
set grid noytics
set xrange [0:*]
set offsets 0, graph 0.12, 0, 0
set style fill solid 0.85 border rgb "#333333"
set key off
set lmargin 20
set label 1 "$(source_of "$f")" at screen 0.99, 0.015 right font ",8" tc rgb "#555555"
set label 2 "$(meta "$f" command | sed 's/"/\\"/g')" at screen 0.01, 0.015 left font ",8" tc rgb "#555555" noenhanced
set bmargin 5.5
plot "$T/bars" using ((\$3 + \$4) / 2):1:3:4:(\$1 - 0.35):(\$1 + 0.35) with boxxyerror lc rgb "#1f77b4", \
     "" using 4:1 with points pt 7 ps 1 lc rgb "#333333", \
     "" using 4:1:(sprintf("%.2f s (+%.2f)", \$4, \$4 - \$3)) with labels left offset 0.8,0 font ",10"
EOF
}

plot_launch launch_k8s holder "on the real cluster"
plot_launch launch_k8s-nodes3 holder "on the real cluster, 3 nodes"
plot_launch launch_kubesim mpi-rsh "on kubesim"
plot_peer
plot_soak
plot_phases
for p in "${PLOTS[@]}"; do
  png=$OUT/${p%% *}
  [ -s "$png" ] || { echo "bench/plot.sh: $png not written" >&2; exit 1; }
  echo "bench/plot.sh: ${png#"$ROOT"/}"
done
