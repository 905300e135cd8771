#!/usr/bin/env bash
# Prints the release notes of VERSION: the lines of CHANGELOG.md's `## [VERSION]` section, up
# to the next `## ` heading, without the blank lines around them. Fails when the section is
# missing or empty, so a tag is never released without notes.
#
#   .github/release-notes.sh VERSION [CHANGELOG]
set -euo pipefail
version="${1:?usage: release-notes.sh VERSION [CHANGELOG]}"
changelog="${2:-CHANGELOG.md}"
notes=$(awk -v heading="## [$version]" '
    /^## / { if (inside) exit; if (index($0, heading) == 1) { inside = 1; next } }
    inside { print }
' "$changelog" | sed -e '/./,$!d')
if [ -z "$(printf '%s' "$notes" | tr -d '[:space:]')" ]; then
    echo "release-notes.sh: $changelog has no section \"## [$version]\" with notes" >&2
    exit 1
fi
printf '%s\n' "$notes"
