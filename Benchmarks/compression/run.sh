#!/usr/bin/env bash
# Compression benchmark: one 24-megapixel JPEG (6000x4000) to a 2048 px long edge, JPEG
# quality 70, metadata stripped, by Courier's VipsImageCompressor and by its peers, in one run.
# Reports the median wall time and median peak RSS (/usr/bin/time -v) of RUNS runs of each,
# the median peak private memory (Benchmarks/memory/peakmem: private dirty pages sampled from
# /proc/PID/smaps_rollup, what the process costs the machine, in runs of their own), and their
# ratios to Courier's. Usage: Benchmarks/compression/run.sh [RUNS]   (default 5)
set -euo pipefail
RUNS="${1:-5}"
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
WORK="$(mktemp -d "/tmp/courier-compress-bench.$$.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
CONVERT=/usr/bin/convert # the real ImageMagick, not a stand-in earlier on PATH

echo "building courier-compress-bench (release)..." >&2
swift build -c release --package-path "$ROOT/Benchmarks" --scratch-path "$ROOT/Benchmarks/.build" \
  --product courier-compress-bench >&2
BENCH="$ROOT/Benchmarks/.build/release/courier-compress-bench"
gcc -O2 -o "$WORK/peakmem" "$ROOT/Benchmarks/memory/peakmem.c"

# A grainy 24 MP "photo": smooth plasma upscaled, plus per-pixel noise, saved at Q92.
echo "generating a 6000x4000 JPEG..." >&2
"$CONVERT" -seed 11 -size 1500x1000 plasma:fractal -depth 8 "$WORK/p.png"
vips resize "$WORK/p.png" "$WORK/up.v" 4 --kernel lanczos3
vips gaussnoise "$WORK/n.v" 6000 4000 --sigma 10 --mean 0
vips add "$WORK/up.v" "$WORK/n.v" "$WORK/s.v"
vips cast "$WORK/s.v" "$WORK/c.v" uchar
vips jpegsave "$WORK/c.v" "$WORK/photo.jpg" --Q 92
rm -f "$WORK"/*.v "$WORK/p.png"
IN="$WORK/photo.jpg"

declare -A CMD
NAMES=(courier vipsthumbnail convert-thumbnail convert-jpeg-size)
CMD[courier]="$BENCH $IN $WORK/courier.jpg 2048 70"
CMD[vipsthumbnail]="vipsthumbnail $IN -s 2048 -o $WORK/vipsthumbnail.jpg[Q=70,strip,optimize_coding]"
CMD[convert-thumbnail]="$CONVERT $IN -auto-orient -thumbnail 2048x2048> -strip -quality 70 $WORK/convert.jpg"
# ImageMagick's own shrink-on-load hint: libjpeg decodes at the smallest scale (1/2 here)
# that is still at least this size. (4096x4096, twice the target, fails on this IM build
# with "cache resources exhausted" under Debian's policy.xml.)
CMD[convert-jpeg-size]="$CONVERT -define jpeg:size=2048x1366 $IN -auto-orient -thumbnail 2048x2048> -strip -quality 70 $WORK/convert2.jpg"

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

declare -A TIME RSS SIZE CPU PRIV
for name in "${NAMES[@]}"; do
  : >"$WORK/$name.t" && : >"$WORK/$name.r" && : >"$WORK/$name.c" && : >"$WORK/$name.p"
done
# Interleave the tools run by run so that machine noise hits them alike.
for ((i = 1; i <= RUNS; i++)); do
  for name in "${NAMES[@]}"; do
    # shellcheck disable=SC2086 # the commands are word-split on purpose
    /usr/bin/time -v -o "$WORK/time.txt" ${CMD[$name]} >/dev/null
    awk -F': ' '/Elapsed \(wall clock\)/ {n=split($2,p,":"); s=0; for(i=1;i<=n;i++) s=s*60+p[i]; print s}' \
      "$WORK/time.txt" >>"$WORK/$name.t"
    awk -F': ' '/Maximum resident set size/ {print $2}' "$WORK/time.txt" >>"$WORK/$name.r"
    awk -F': ' '/(User|System) time \(seconds\)/ {s+=$2} END {print s}' "$WORK/time.txt" \
      >>"$WORK/$name.c"
  done
done
# Private memory in runs of their own: the sampling costs the parent CPU.
for ((i = 1; i <= RUNS; i++)); do
  for name in "${NAMES[@]}"; do
    # shellcheck disable=SC2086 # the commands are word-split on purpose
    "$WORK/peakmem" ${CMD[$name]} 2>/dev/null | awk '{print $2}' >>"$WORK/$name.p"
  done
done
for name in "${NAMES[@]}"; do
  TIME[$name]=$(median <"$WORK/$name.t")
  RSS[$name]=$(median <"$WORK/$name.r")
  CPU[$name]=$(median <"$WORK/$name.c")
  PRIV[$name]=$(median <"$WORK/$name.p")
done
SIZE[courier]=$(stat -c %s "$WORK/courier.jpg")
SIZE[vipsthumbnail]=$(stat -c %s "$WORK/vipsthumbnail.jpg")
SIZE[convert-thumbnail]=$(stat -c %s "$WORK/convert.jpg")
SIZE[convert-jpeg-size]=$(stat -c %s "$WORK/convert2.jpg")

echo
echo "input: 6000x4000 JPEG, $(stat -c %s "$IN") bytes; $RUNS runs each, medians;" \
  "libvips $(vips --version | cut -d- -f2), $("$CONVERT" -version | head -1 | cut -d' ' -f2-3)"
echo
echo "| tool | output | wall time (s) | time vs courier | CPU user+sys (s) | CPU vs courier | peak RSS (MiB) | RSS vs courier | peak private (MiB) | private vs courier | output bytes |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
for name in "${NAMES[@]}"; do
  dims=$(vipsheader "$WORK/$( [ "$name" = convert-thumbnail ] && echo convert || ([ "$name" = convert-jpeg-size ] && echo convert2 || echo "$name")).jpg" | awk '{print $2}')
  awk -v n="$name" -v d="$dims" -v t="${TIME[$name]}" -v r="${RSS[$name]}" -v s="${SIZE[$name]}" \
    -v c="${CPU[$name]}" -v t0="${TIME[courier]}" -v r0="${RSS[courier]}" -v c0="${CPU[courier]}" \
    -v p="${PRIV[$name]}" -v p0="${PRIV[courier]}" \
    'BEGIN {printf "| %s | %s | %.2f | %.2fx | %.2f | %.2fx | %.0f | %.2fx | %.1f | %.2fx | %d |\n", n, d, t, t/t0, c, c/c0, r/1024, r/r0, p/1024, p/p0, s}'
done
