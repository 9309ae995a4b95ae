#!/usr/bin/env bash
# Builds dsh's release binaries: static (CGO_ENABLED=0), -trimpath, for
# linux and darwin on amd64 and arm64, named dsh-<version>-<os>-<arch>,
# with SHA256SUMS, into an output directory. Offline: modules come from
# the module cache only (GOPROXY=off; run `go mod download` first on a new
# machine).
#
#   scripts/release.sh [--dry-run] [--out DIR]
#
# The version is the v* tag on HEAD (DSH_VERSION overrides it); a release
# needs that tag and a clean tree. --dry-run builds without either (the
# version is then v0.0.0-dev unless tagged), which is what CI runs.
# DSH_PLATFORMS="linux/amd64 linux/arm64" builds a subset (default: all
# four). Each binary gets its version, commit and commit date through
# -ldflags -X, since a build from a git worktree has no vcs.* build info;
# `dsh version` prints them.
set -euo pipefail
cd "$(dirname "$0")/.."

out=dist
dry_run=false
while (($#)); do
  case $1 in
    --dry-run) dry_run=true ;;
    --out) out=${2:?--out needs a directory}; shift ;;
    --out=*) out=${1#--out=} ;;
    -h|--help) sed -n '2,17s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) echo "release.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
platforms=${DSH_PLATFORMS:-linux/amd64 linux/arm64 darwin/amd64 darwin/arm64}

commit=$(git rev-parse HEAD)
commit_time=$(TZ=UTC git show -s --format=%cd --date=format-local:%Y-%m-%dT%H:%M:%SZ HEAD)
modified=false
[[ -z $(git status --porcelain) ]] || modified=true
version=${DSH_VERSION:-$(git describe --tags --exact-match --match 'v[0-9]*' HEAD 2>/dev/null || true)}
if ! $dry_run; then
  [[ -n $version ]] || { echo "release.sh: HEAD has no v* tag (tag it, or --dry-run)" >&2; exit 1; }
  ! $modified || { echo "release.sh: the tree has uncommitted changes (commit them, or --dry-run)" >&2; exit 1; }
fi
version=${version:-v0.0.0-dev}
if [[ ! $version =~ ^v[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.+-]+)?$ ]]; then
  echo "release.sh: version $version is not vMAJOR.MINOR.PATCH[-pre]" >&2
  exit 1
fi

mkdir -p "$out"
ldflags="-s -w -X main.version=$version -X main.commit=$commit -X main.commitTime=$commit_time -X main.modified=$modified"
files=()
for p in $platforms; do
  os=${p%/*} arch=${p#*/}
  name="dsh-${version#v}-$os-$arch"
  echo "release.sh: $name"
  CGO_ENABLED=0 GOOS=$os GOARCH=$arch GOPROXY=off GOFLAGS=-mod=readonly GOTOOLCHAIN=local \
    go build -trimpath -buildvcs=false -ldflags "$ldflags" -o "$out/$name" ./cmd/dsh
  files+=("$name")
done
(cd "$out" && sha256sum "${files[@]}" > SHA256SUMS)
echo "release.sh: ${#files[@]} binaries of dsh $version (commit ${commit:0:12}$($modified && echo +dirty)) and SHA256SUMS in $out"
