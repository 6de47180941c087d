#!/usr/bin/env bash
# Fails when src/, docs/, README.md or CONTRIBUTING.md name a repository path that does not
# exist: a comment citing a moved header, a doc pointing at a renamed script. Checked per line:
#   * tokens under a top folder of the repository (docs/, src/, perf/, ci/, tests/, testkit/,
#     spack/, input_decks/, cmake/) and minisgd/... (an include path, under src/);
#   * other tokens with a file extension (kernels/gram/gram.hpp), found from the repository
#     root, src/minisgd/, src/ or the naming file's folder;
#   * Markdown link targets, from the naming file's folder.
# A path names a program when PATH.cpp exists (perf/calibrate). Ignored: URLs, #include <...>,
# globs (*), placeholders in capitals that do not exist (DECK.yaml), anything under build/, the
# headers CMake generates into the build tree, and the folders a reader's runs write (sub/).
# Prints file:line and the path for each missing one; exit status 1 if any.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export LC_ALL=C.UTF-8

roots='docs|src|perf|ci|tests|testkit|spack|input_decks|cmake'
exts='hpp|cpp|h|md|sh|py|yaml|yml|json|txt|cmake|png|csv'
seg='(?:[\w.*+-]|\{[\w.,*+-]*\})+'  # one path component; {a,b} is expanded below
generated='minisgd/(version|build_info)\.hpp'  # CMakeLists.txt, src/CMakeLists.txt
outputs='sub|results|out'                       # a run's own folders (docs/procurement.md)

exists() {  # path, folder of the naming file: 0 when it names something in the repository
  local p=${1%/} dir=$2 base
  case $p in
    minisgd/*) [[ -e src/$p || -e src/$p.cpp ]]; return ;;
  esac
  if [[ $p =~ ^($roots)(/|$) ]]; then
    [[ -e $p || -e $p.cpp ]]; return
  fi
  for base in . src/minisgd src "$dir"; do
    [[ -e $base/$p ]] && return 0
  done
  return 1
}

expand() {  # one level of {a,b} in a path, as the shell would: prints each path
  local p=$1
  if [[ $p =~ ^([^{]*)\{([^}]*)\}(.*)$ ]]; then
    local head=${BASH_REMATCH[1]} alts=${BASH_REMATCH[2]} tail=${BASH_REMATCH[3]} a
    IFS=, read -ra alts <<< "$alts"
    for a in "${alts[@]}"; do expand "$head$a$tail"; done
  else
    printf '%s\n' "$p"
  fi
}

check() {  # file, line, token, kind (path | link)
  local file=$1 line=$2 tok=$3 kind=$4 dir p
  dir=$(dirname "$file")
  tok=${tok%%#*}
  while [[ $tok == *[.,:-] ]]; do tok=${tok%?}; done
  [[ -z $tok || $tok == *'*'* || $tok == build/* || $tok =~ ^($generated|($outputs)/) ]] && return 0
  if [[ $kind == link ]]; then
    [[ $tok == *:* ]] && return 0                        # mailto:, other schemes
    [[ -e $dir/$tok ]] || { echo "$file:$line: $tok"; return 1; }
    return 0
  fi
  [[ $tok == */* ]] || return 0
  [[ $tok =~ ^(($roots|minisgd)/|($roots)$) || $tok =~ \.($exts)$ ]] || return 0
  local bad=0
  while IFS= read -r p; do
    exists "$p" "$dir" && continue
    [[ $p =~ (^|[/-])[A-Z][A-Z0-9_]*([./-]|$) ]] && continue   # a placeholder: DECK.yaml
    echo "$file:$line: $p"; bad=1
  done < <(expand "$tok")
  return $bad
}

missing=0
while IFS= read -r file; do
  grep -Iq . "$file" || continue                          # binary (figures) or empty
  # URLs and system includes out, line numbers kept.
  text=$(sed -E -e 's#[A-Za-z][A-Za-z0-9+.-]*://[^[:space:])>"`]*##g' -e 's/#include <[^>]*>//' "$file")
  while IFS=: read -r line tok; do
    check "$file" "$line" "$tok" path || missing=1
  done < <(grep -noP "(?<![\w./\$~{}-])$seg(?:/$seg)+/?" <<< "$text" || true)
  [[ $file == *.md ]] || continue
  while IFS=: read -r line tok; do
    check "$file" "$line" "$tok" link || missing=1
  done < <(grep -noP '\]\(\K[^)\s]+' <<< "$text" || true)
done < <(git ls-files -co --exclude-standard -- src docs README.md CONTRIBUTING.md)

if ((missing)); then
  echo "check_paths: the paths above do not exist (fix the path, or the text naming it)" >&2
  exit 1
fi
echo "check_paths: every repository path named in src/, docs/ and the top-level docs exists"
