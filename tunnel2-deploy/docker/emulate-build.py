#!/usr/bin/env python3
"""Replays a Dockerfile's build stage on this machine, without a Docker engine.

For each Dockerfile given (default: all *.Dockerfile beside this script) it copies exactly what the
build stage COPYs from the build context (the repository root, honouring .dockerignore) into an empty
temporary folder, runs the stage's RUN lines there (`dotnet restore`, `dotnet publish`, with the
absolute output folder mapped into the temporary folder), then checks that the final stage's
ENTRYPOINT assembly was published and that `dotnet <assembly> --help` runs from the publish folder.

This proves that the COPY lists are complete (restore and publish see nothing else of the repo)
and that the publish works; it does not pull or test the base images. It builds with the local SDK.

  tunnel2-deploy/docker/emulate-build.py [--keep] [DOCKERFILE ...]
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path, PurePosixPath

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(REPO / "tunnel2-deploy" / "dev"))
from validate_compose import copy_sources, dockerignored, load_dockerignore, parse_dockerfile  # noqa: E402


def copy_into(src_rel: str, dest: Path, rules) -> int:
    """COPY semantics for a file or a directory (its contents), skipping .dockerignore'd paths."""
    src = REPO / src_rel
    count = 0
    if src.is_file():
        target = dest / src.name if str(dest).endswith("/") or dest.is_dir() else dest
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, target)
        return 1
    for path in sorted(src.rglob("*")):
        rel = path.relative_to(REPO).as_posix()
        if path.is_dir() or dockerignored(rel, rules):
            continue
        target = dest / path.relative_to(src)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)
        count += 1
    return count


def emulate(dockerfile: Path, keep: bool) -> bool:
    rules = load_dockerignore()
    stages = parse_dockerfile(dockerfile)
    build, final = stages[0], stages[-1]
    root = Path(tempfile.mkdtemp(prefix="tunnel2-emulate-"))
    print(f"== {dockerfile.relative_to(REPO)} in {root}")
    workdir = PurePosixPath("/")
    ok = True
    started = time.monotonic()

    def local(path: str) -> Path:
        absolute = PurePosixPath(path) if path.startswith("/") else workdir / path
        return root / str(absolute).lstrip("/")

    try:
        for keyword, args in build.instructions:
            if keyword == "WORKDIR":
                workdir = PurePosixPath(args) if args.startswith("/") else workdir / args
                local(str(workdir)).mkdir(parents=True, exist_ok=True)
            elif keyword in ("COPY", "ADD"):
                sources, dest, from_stage = copy_sources(args)
                if from_stage:
                    continue
                target = local(dest)
                if dest.endswith("/") or len(sources) > 1:
                    target.mkdir(parents=True, exist_ok=True)
                files = sum(copy_into(s.rstrip("/"), target, rules) for s in sources)
                print(f"   COPY {' '.join(sources)} -> {dest} ({files} files)")
            elif keyword == "RUN":
                # Map absolute container paths used as outputs (-o /app) into the temporary root.
                command = re.sub(r"(-o|--output)\s+/(\S*)", lambda m: f"{m.group(1)} {root}/{m.group(2)}", args)
                print(f"   RUN {args}")
                result = subprocess.run(command, shell=True, cwd=local(str(workdir)), capture_output=True, text=True)
                if result.returncode != 0:
                    print(result.stdout[-4000:] + result.stderr[-2000:])
                    print(f"FAIL {dockerfile.name}: RUN exited with {result.returncode}")
                    return False

        # Final stage: COPY --from=build <dir> ./  and ENTRYPOINT ["dotnet", "X.dll"]
        entry = final.all("ENTRYPOINT")[-1]
        assembly = re.search(r'"([^"]+\.dll)"', entry).group(1)
        copy_from = [copy_sources(a) for a in final.all("COPY") if "--from=" in a]
        published = root / copy_from[0][0][0].lstrip("/")
        dll = published / assembly
        if not dll.is_file():
            print(f"FAIL {dockerfile.name}: {assembly} is not in the published folder {published}")
            return False
        if not (published / "appsettings.json").is_file():
            print(f"FAIL {dockerfile.name}: appsettings.json is not in the published folder")
            ok = False
        result = subprocess.run(["dotnet", assembly, "--help"], cwd=published, capture_output=True, text=True, timeout=60)
        if result.returncode != 0:
            print(result.stdout[-2000:] + result.stderr[-2000:])
            print(f"FAIL {dockerfile.name}: dotnet {assembly} --help exited with {result.returncode}")
            return False
        print(f"ok   {dockerfile.name}: restore + publish from the COPY'd files only, {assembly} published and runs "
              f"--help ({time.monotonic() - started:.0f} s)")
        return ok
    finally:
        if keep:
            print(f"   kept {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)


def main(argv: list[str]) -> int:
    keep = "--keep" in argv
    files = [Path(a).resolve() for a in argv if not a.startswith("--")] or sorted(HERE.glob("*.Dockerfile"))
    results = [emulate(f, keep) for f in files]
    print(f"{sum(results)} passed, {len(results) - sum(results)} failed")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
