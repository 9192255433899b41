#!/usr/bin/env bash
# rules.sh - checks the tree keeps one rule per idea (issue 38): the contract header is declarations
# only and pulls no jansson, sh_quote is defined once, one place reads /proc/self/exe to find a
# sibling program, the programs name their message parameter errmsg and set it with kube_set_err,
# the programs read a JSON field by name through kube_json_at*, and C lines stay within 125
# columns. Prints each offence on one line and exits 1 if there is any; `make rules` runs it.
set -u
cd "$(dirname "$0")/.." || exit 2

CONTRACT=include/mpik8s/contract.h
# The static bundle launcher is one file linked against nothing of ours (docs/rsh.md, "Self-contained
# delivery"): it reads /proc/self/exe for its own directory, with a fallback for chroots without /proc.
SELF_EXE_EXEMPT='rsh/launcher/launcher.c'

fail=0
offence() {
    echo "rules.sh: $*" >&2
    fail=1
}

# the C sources of the tree: tracked and new files, not build outputs
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    mapfile -t SRCS < <(git ls-files -co --exclude-standard -- '*.c' '*.h' | sort)
else
    mapfile -t SRCS < <(find . -path ./build -prune -o -name '*.[ch]' -print | sed 's|^\./||' | sort)
fi
[ "${#SRCS[@]}" -gt 0 ] || { echo "rules.sh: no C sources found" >&2; exit 2; }
[ -f "$CONTRACT" ] || { echo "rules.sh: $CONTRACT is missing" >&2; exit 2; }

# 1. contract.h: names, constants and declarations; the code is in mpik8s/*.c
while IFS= read -r l; do
    offence "$CONTRACT:${l%%:*}: a static inline function (its body belongs in mpik8s/*.c)"
done < <(grep -n 'static[[:space:]]\+inline' "$CONTRACT")
while IFS= read -r l; do
    offence "$CONTRACT:${l%%:*}: a function body (a '{' in column 1; the code belongs in mpik8s/*.c)"
done < <(grep -n '^{' "$CONTRACT")
while IFS= read -r l; do
    offence "$CONTRACT:${l%%:*}: includes jansson (declare struct json_t instead; only mpik8s/termination.c needs it)"
done < <(grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]jansson\.h[>"]' "$CONTRACT")

# 2. sh_quote: one definition (a function named ...sh_quote whose signature, from column 1, is followed
#    by a body before any ';')
defs=$(awk '
    /^[A-Za-z_]/ && /(^|[^A-Za-z0-9_])[A-Za-z0-9_]*sh_quote[[:space:]]*\(/ && !/^#/ { cand = FILENAME ":" FNR; }
    cand != "" { if (index($0, ";")) cand = ""; else if ($0 ~ /\{/) { print cand; cand = ""; } }
' "${SRCS[@]}")
n=$(printf '%s' "$defs" | grep -c .)
if [ "$n" -ne 1 ]; then
    offence "sh_quote is defined $n times (want 1, mpik8s/sh_quote.c):" $defs
fi

# 3. /proc/self/exe: read in one place (mpik8s/sibling.c, mpik8s_self_dir)
readers=$(grep -n -F '"/proc/self/exe"' "${SRCS[@]}" | grep -v -F "$SELF_EXE_EXEMPT:" | cut -d: -f1,2)
n=$(printf '%s' "$readers" | grep -c .)
if [ "$n" -ne 1 ]; then
    offence "/proc/self/exe is read in $n places (want 1, mpik8s/sibling.c; find a sibling with mpik8s_sibling):" $readers
fi

# the programs' own sources (docs/library.md "## Errors" and docs/architecture.md "Names" hold there)
PROG_SRCS=()
for f in "${SRCS[@]}"; do
    case "$f" in controller/* | agent/*) PROG_SRCS+=("$f") ;; esac
done

# 4. the error convention: the message parameter is `char **errmsg` (not err), and a message is
#    set with kube_set_err (it frees an earlier one and takes a NULL errmsg), never written directly
while IFS= read -r l; do
    offence "${l%%:*}:$(cut -d: -f2 <<<"$l"): a char **err parameter (name it errmsg, docs/library.md \"## Errors\")"
done < <(grep -nE 'char[[:space:]]*\*[[:space:]]*\*[[:space:]]*err\b' "${PROG_SRCS[@]}")
while IFS= read -r l; do
    offence "${l%%:*}:$(cut -d: -f2 <<<"$l"): *errmsg written directly (use kube_set_err)"
done < <(grep -nE '\*errmsg[[:space:]]*=[^=]' "${PROG_SRCS[@]}" | grep -vE 'char[[:space:]]+\*|, \*errmsg')

# 5. JSON: a field named in the code (a string literal or an UPPER_CASE macro) is read with
#    kube_json_at* (include/kube/json.h); raw json_object_get stays for keys known only at run
#    time (a json_t used as a map, a table of keys walked in a loop, a helper's key parameter)
while IFS= read -r l; do
    offence "$l: json_object_get of a named field (use kube_json_at, kube_json_at_str, _int or _bool)"
done < <(perl -0777 -ne '
    while (/\bjson_object_get\(((?:[^(),]|\((?:[^()]|\([^()]*\))*\))*),\s*("|[A-Z][A-Z0-9_]*\s*\))/g) {
        my $line = 1 + (substr($_, 0, $-[0]) =~ tr/\n//);
        print "$ARGV:$line\n";
    }' "${PROG_SRCS[@]}")

# 6. lines within the 125 columns of .clang-format (clang-format leaves long comments and strings)
while IFS= read -r l; do
    offence "$l columns (at most 125, .clang-format's ColumnLimit)"
done < <(awk 'length > 125 { print FILENAME ":" FNR ": " length }' "${SRCS[@]}")

if [ "$fail" -ne 0 ]; then
    exit 1
fi
raw=$(cat "${PROG_SRCS[@]}" | grep -o '\bjson_object_get(' | wc -l)
echo "rules.sh: ${#SRCS[@]} C sources keep one rule per idea (contract.h declarations only, one sh_quote," \
    "one /proc/self/exe reader, errmsg set with kube_set_err, named fields read with kube_json_at* ($raw raw" \
    "json_object_get left in controller/ and agent/, each with a run-time key), lines within 125 columns)"
