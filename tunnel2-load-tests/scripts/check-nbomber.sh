#!/usr/bin/env bash
# Checks whether NBomber can be restored from the configured NuGet source(s), in a scratch
# project outside the repository (so the repo's central package versions do not interfere).
# Prints one line per package/version and exits 0 when NBomber 4.1.2 (Apache-2.0) restores.
#
#   tunnel2-load-tests/scripts/check-nbomber.sh [PACKAGE@VERSION...]
set -uo pipefail

CANDIDATES=("$@")
if ((${#CANDIDATES[@]} == 0)); then
  # 4.1.2 is the last Apache-2.0 release; the others are its neighbours and the 5.x line
  # (free for personal use only), checked only to show whether the package id exists at all.
  CANDIDATES=(NBomber@4.1.2 NBomber@4.1.1 NBomber@4.1.0 NBomber@4.0.0 NBomber@5.0.0
              NBomber.Http@4.1.1 NBomber.Http@5.0.0 NBomber.Contracts@4.1.2)
fi

command -v dotnet >/dev/null 2>&1 || { echo "check-nbomber: dotnet is not on PATH" >&2; exit 127; }

scratch="$(mktemp -d /tmp/nbcheck.XXXXXX)"
trap 'rm -rf "$scratch"' EXIT
cd "$scratch" || exit 1
# Empty props so that nothing above /tmp (none exists) or the repo's central versions apply.
echo '<Project></Project>' >Directory.Build.props
echo '<Project><PropertyGroup><ManagePackageVersionsCentrally>false</ManagePackageVersionsCentrally></PropertyGroup></Project>' \
  >Directory.Packages.props
echo 'System.Console.WriteLine("nbcheck");' >Program.cs

echo "dotnet $(dotnet --version); sources:"
dotnet nuget list source 2>&1 | sed -n 's/^ *[0-9]*\. *//p; s/^ *\(https\?:.*\)/    \1/p'
ok412=1
for spec in "${CANDIDATES[@]}"; do
  id="${spec%@*}" version="${spec#*@}"
  cat >nbcheck.csproj <<EOF
<Project Sdk="Microsoft.NET.Sdk">
  <PropertyGroup><OutputType>Exe</OutputType><TargetFramework>net10.0</TargetFramework></PropertyGroup>
  <ItemGroup><PackageReference Include="$id" Version="$version" /></ItemGroup>
</Project>
EOF
  if out="$(dotnet restore --force --nologo 2>&1)"; then
    echo "RESTORED  $id $version"
    [[ "$id@$version" == NBomber@4.1.2 ]] && ok412=0
  else
    echo "FAILED    $id $version: $(grep -o 'error NU[0-9]*:.*' <<<"$out" | head -n 1)"
  fi
done
exit "$ok412"
