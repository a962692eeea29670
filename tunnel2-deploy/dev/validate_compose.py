#!/usr/bin/env python3
"""Static checks of the Tunnel2 dev stack (docker-compose.yml, .env, Dockerfiles, .dockerignore).

No Docker engine needed. Called by validate-compose.sh (which also runs `docker-compose config -q`);
prints one line per check ("ok  ..." / "FAIL ...") and exits 1 if any check fails.
Needs PyYAML (python3-yaml), which docker-compose itself depends on.
"""
from __future__ import annotations

import fnmatch
import os
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path, PurePosixPath

import yaml

DEV_DIR = Path(__file__).resolve().parent
REPO = DEV_DIR.parent.parent
COMPOSE = DEV_DIR / "docker-compose.yml"
ENV_FILE = DEV_DIR / ".env"
DOCKERIGNORE = REPO / ".dockerignore"

# The documented topology (tunnel2-deploy/README.md, docs: ports of the dev stack).
EXPECTED_PORTS = {12000: "tunnel_server", 12001: "tunnel_server", 12005: "httpbin", 12007: "test_backend"}
EXPECTED_CLIENTS = {
    "tunnel_client": ("22222222-2222-2222-2222-222222222222", "http://test_backend:12007"),
    "tunnel_client_httpbin": ("33333333-3333-3333-3333-333333333333", "http://httpbin:12005"),
}
TOKEN_VAR = "TUNNEL2_TOKEN"

failures = 0
passed = 0


def report(ok: bool, what: str, detail: str = "") -> bool:
    global failures, passed
    if ok:
        passed += 1
    else:
        failures += 1
    print(f"{'ok  ' if ok else 'FAIL'} {what}{(': ' + detail) if detail else ''}")
    return ok


# ---------------------------------------------------------------------------------------------
# .env and variable interpolation (compose syntax: ${VAR}, ${VAR:-default}, ${VAR:?err}, $VAR, $$)
VAR_RE = re.compile(r"\$(?:\$|\{(?P<braced>[A-Za-z_][A-Za-z0-9_]*)(?P<mod>[^}]*)\}|(?P<plain>[A-Za-z_][A-Za-z0-9_]*))")


def read_env_file(path: Path) -> dict[str, str]:
    values: dict[str, str] = {}
    if not path.is_file():
        return values
    for line in path.read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, value = line.split("=", 1)
        values[key.strip()] = value.strip().strip("'\"")
    return values


def referenced_vars(text: str) -> list[tuple[str, str]]:
    """(name, modifier) of every ${VAR...} / $VAR in text, skipping $$ escapes."""
    found = []
    for m in VAR_RE.finditer(text):
        if m.group(0) == "$$":
            continue
        found.append((m.group("braced") or m.group("plain"), m.group("mod") or ""))
    return found


def interpolate(value, env: dict[str, str]):
    if isinstance(value, str):
        def sub(m: re.Match) -> str:
            if m.group(0) == "$$":
                return "$"
            name = m.group("braced") or m.group("plain")
            mod = m.group("mod") or ""
            current = env.get(name)
            if mod.startswith(":-") and not current:
                return mod[2:]
            if mod.startswith("-") and current is None:
                return mod[1:]
            return current or ""
        return VAR_RE.sub(sub, value)
    if isinstance(value, dict):
        return {k: interpolate(v, env) for k, v in value.items()}
    if isinstance(value, list):
        return [interpolate(v, env) for v in value]
    return value


# ---------------------------------------------------------------------------------------------
# .dockerignore (Docker semantics: last matching pattern wins, '!' re-includes, a pattern that
# matches a directory excludes everything under it, '**' matches any number of directories)
def load_dockerignore() -> list[tuple[bool, re.Pattern]]:
    rules = []
    if not DOCKERIGNORE.is_file():
        return rules
    for raw in DOCKERIGNORE.read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        negate = line.startswith("!")
        pattern = line[1:].strip() if negate else line
        pattern = str(PurePosixPath("/" + pattern)).lstrip("/")  # clean: drop leading/trailing '/'
        regex = ""
        i = 0
        while i < len(pattern):
            if pattern.startswith("**/", i):
                regex += "(?:.*/)?"
                i += 3
            elif pattern.startswith("**", i):
                regex += ".*"
                i += 2
            elif pattern[i] == "*":
                regex += "[^/]*"
                i += 1
            elif pattern[i] == "?":
                regex += "[^/]"
                i += 1
            else:
                regex += re.escape(pattern[i])
                i += 1
        rules.append((negate, re.compile(regex + "$")))
    return rules


def dockerignored(rel: str, rules) -> bool:
    parts = PurePosixPath(rel).parts
    candidates = ["/".join(parts[: n + 1]) for n in range(len(parts))]
    excluded = False
    for negate, regex in rules:
        if any(regex.match(c) for c in candidates):
            excluded = not negate
    return excluded


# ---------------------------------------------------------------------------------------------
# Dockerfile parsing
class Stage:
    def __init__(self, image: str, name: str | None):
        self.image = image
        self.name = name
        self.instructions: list[tuple[str, str]] = []

    def all(self, keyword: str) -> list[str]:
        return [args for kw, args in self.instructions if kw == keyword]


def parse_dockerfile(path: Path) -> list[Stage]:
    lines, current = [], ""
    for raw in path.read_text().splitlines():
        stripped = raw.strip()
        if not current and (not stripped or stripped.startswith("#")):
            continue
        if stripped.startswith("#"):  # comment inside a continued instruction
            continue
        if stripped.endswith("\\"):
            current += stripped[:-1] + " "
            continue
        current += stripped
        lines.append(current)
        current = ""
    if current:
        lines.append(current)

    args: dict[str, str] = {}
    stages: list[Stage] = []
    for line in lines:
        keyword, _, rest = line.partition(" ")
        keyword = keyword.upper()
        rest = rest.strip()
        if keyword == "ARG" and not stages:
            name, _, default = rest.partition("=")
            args[name] = default
            continue
        if keyword == "FROM":
            image = re.sub(r"\$\{?(\w+)\}?", lambda m: args.get(m.group(1), m.group(0)), rest.split()[0])
            alias = re.search(r"\s+AS\s+(\S+)", rest, re.IGNORECASE)
            stages.append(Stage(image, alias.group(1) if alias else None))
            continue
        if stages:
            stages[-1].instructions.append((keyword, rest))
    return stages


def copy_sources(args: str) -> tuple[list[str], str, bool]:
    """(sources, destination, from_other_stage) of a COPY/ADD instruction (shell form)."""
    tokens = args.split()
    from_stage = any(t.startswith("--from=") for t in tokens)
    tokens = [t for t in tokens if not t.startswith("--")]
    return tokens[:-1], tokens[-1], from_stage


def project_references(csproj: Path, seen: set[Path] | None = None) -> set[Path]:
    """csproj and every project it references, transitively (paths relative to REPO)."""
    seen = seen if seen is not None else set()
    csproj = csproj.resolve()
    if csproj in seen or not csproj.is_file():
        return seen
    seen.add(csproj)
    for ref in ET.parse(csproj).getroot().iter("ProjectReference"):
        include = ref.get("Include", "").replace("\\", "/")
        project_references((csproj.parent / include), seen)
    return seen


def check_dockerfile(context: Path, dockerfile: Path, rules) -> None:
    rel_df = dockerfile.relative_to(REPO) if dockerfile.is_relative_to(REPO) else dockerfile
    stages = parse_dockerfile(dockerfile)
    if not report(len(stages) >= 2, f"{rel_df}: multi-stage", f"{len(stages)} stage(s)"):
        return
    build, final = stages[0], stages[-1]
    report("dotnet/sdk" in build.image, f"{rel_df}: build stage uses the SDK image", build.image)
    report("sdk" not in final.image and "dotnet/aspnet" in final.image and "alpine" in final.image,
           f"{rel_df}: final stage is the ASP.NET runtime on Alpine, without the SDK", final.image)

    # COPY sources exist in the build context and are not excluded by .dockerignore.
    copied: list[str] = []
    missing, ignored = [], []
    restore_at = None
    for index, (kw, args) in enumerate(build.instructions):
        if kw in ("COPY", "ADD"):
            sources, _, from_stage = copy_sources(args)
            if from_stage:
                continue
            for src in sources:
                rel = src.rstrip("/")
                if not (context / rel).exists():
                    missing.append(src)
                elif dockerignored(rel, rules):
                    ignored.append(src)
                copied.append(rel)
        if kw == "RUN" and "dotnet restore" in args and restore_at is None:
            restore_at = index
    report(not missing, f"{rel_df}: every COPY source exists in the build context",
           ("missing " + ", ".join(missing)) if missing else f"{len(copied)} paths")
    report(not ignored, f"{rel_df}: no COPY source is excluded by .dockerignore", ", ".join(ignored))

    # The published project and everything it references are copied: csproj before restore, sources after.
    publish = [a for a in build.all("RUN") if "dotnet publish" in a]
    if not report(bool(publish), f"{rel_df}: build stage runs dotnet publish"):
        return
    report("-c Release" in publish[0] or "--configuration Release" in publish[0], f"{rel_df}: publish -c Release")
    project = next((t for t in publish[0].split() if t.endswith(".csproj")), None)
    if not report(project is not None and (context / project).is_file(), f"{rel_df}: published project exists", str(project)):
        return
    copied_before_restore = []
    for kw, args in build.instructions[: restore_at if restore_at is not None else 0]:
        if kw in ("COPY", "ADD"):
            copied_before_restore += [s.rstrip("/") for s in copy_sources(args)[0]]
    needed = sorted(p.relative_to(context.resolve()).as_posix() for p in project_references(context / project))
    not_restored = [p for p in needed if p not in copied_before_restore]
    def dir_copied(project_file: str) -> bool:
        directory = str(PurePosixPath(project_file).parent)
        return any(c in (".", "") or directory == c or directory.startswith(c + "/") for c in copied)
    not_copied = [p for p in needed if not dir_copied(p)]
    report(restore_at is not None and not not_restored,
           f"{rel_df}: restore layer copies the csproj of every referenced project before 'dotnet restore'",
           ("missing " + ", ".join(not_restored)) if not_restored else ", ".join(needed))
    report(not not_copied, f"{rel_df}: the sources of every referenced project are copied",
           ", ".join(not_copied))
    for props in ("Directory.Build.props", "Directory.Packages.props", "global.json"):
        if (context / props).is_file():
            report(props in copied_before_restore, f"{rel_df}: {props} copied before restore")
    # bin/ and obj/ of the host must never reach the image (obj/project.assets.json holds host paths).
    project_dir = PurePosixPath(project).parent
    report(dockerignored(f"{project_dir}/obj/project.assets.json", rules) and dockerignored(f"{project_dir}/bin/x.dll", rules),
           f"{rel_df}: .dockerignore keeps bin/ and obj/ out of the context")

    # Final stage: non-root user, health check, entrypoint, ports.
    users = final.all("USER")
    user = users[-1] if users else ""
    report(bool(user) and user.split(":")[0] not in ("root", "0"), f"{rel_df}: final stage runs as a non-root USER", user or "no USER")
    health = final.all("HEALTHCHECK")
    report(bool(health) and not health[-1].upper().startswith("NONE"), f"{rel_df}: final stage has a HEALTHCHECK")
    assembly = ET.parse(context / project).getroot().findtext(".//AssemblyName") or Path(project).stem
    entry = final.all("ENTRYPOINT")
    report(bool(entry) and re.search(rf'"dotnet"\s*,\s*"{re.escape(assembly)}\.dll"', entry[-1]) is not None,
           f"{rel_df}: ENTRYPOINT runs dotnet {assembly}.dll", entry[-1] if entry else "no ENTRYPOINT")


def check_expose(service: str, dockerfile: Path, compose_ports: set[int]) -> None:
    final = parse_dockerfile(dockerfile)[-1]
    exposed = {int(p.split("/")[0]) for args in final.all("EXPOSE") for p in args.split()}
    report(exposed == compose_ports, f"{service}: the Dockerfile's EXPOSE matches the ports compose publishes",
           f"EXPOSE {sorted(exposed)}, compose {sorted(compose_ports)}")


def dockerfile_has_healthcheck(context: Path, dockerfile: Path) -> bool:
    if not dockerfile.is_file():
        return False
    health = parse_dockerfile(dockerfile)[-1].all("HEALTHCHECK")
    return bool(health) and not health[-1].upper().startswith("NONE")


def published_ports(service: dict) -> list[tuple[int, int]]:
    result = []
    for entry in service.get("ports", []) or []:
        if isinstance(entry, dict):
            result.append((int(entry.get("published", 0)), int(entry.get("target", 0))))
            continue
        text = str(entry).split("/")[0]
        parts = text.split(":")
        target = int(parts[-1])
        published = int(parts[-2]) if len(parts) >= 2 else target
        result.append((published, target))
    return result


def main() -> int:
    raw_text = COMPOSE.read_text()
    env_file = read_env_file(ENV_FILE)
    env = {**env_file, **os.environ}
    compose = yaml.safe_load(raw_text)
    services: dict = interpolate(compose.get("services", {}), env)
    rules = load_dockerignore()
    print(f"validating {COMPOSE.relative_to(REPO)} ({len(services)} services)")

    report(set(services) == {"test_backend", "httpbin", "tunnel_server", "tunnel_client", "tunnel_client_httpbin"},
           "services are the documented five", ", ".join(sorted(services)))
    report(DOCKERIGNORE.is_file(), ".dockerignore exists at the repository root (the build context)")

    # ${VAR} references are all defined.
    refs = referenced_vars(raw_text)
    undefined = sorted({name for name, mod in refs if name not in env and not mod.startswith((":-", "-"))})
    report(not undefined, "every ${VAR} in docker-compose.yml is defined (.env or environment)",
           ("undefined " + ", ".join(undefined)) if undefined else ", ".join(sorted({n for n, _ in refs})) or "none")

    # The token: defined once (.env), referenced as ${TUNNEL2_TOKEN}, the same value for server and clients.
    token = env_file.get(TOKEN_VAR)
    if report(bool(token), f"{TOKEN_VAR} is defined in {ENV_FILE.relative_to(REPO)}"):
        places = []
        for path in sorted(list(DEV_DIR.iterdir()) + list((DEV_DIR.parent / "docker").iterdir())):
            if path.is_file() and path.suffix != ".md":
                count = path.read_text(errors="replace").count(token)
                places += [str(path.relative_to(REPO))] * count
        report(places == [str(ENV_FILE.relative_to(REPO))], "the token value is written in exactly one place",
               ", ".join(places) or "nowhere")
    token_settings = {f"{name}.{key}": value for name, svc in services.items()
                      for key, value in (svc.get("environment") or {}).items() if key.endswith("__Token")}
    report(len(token_settings) == 3 and len(set(token_settings.values())) == 1 and token in token_settings.values(),
           f"server and both clients get the same token from ${{{TOKEN_VAR}}}", ", ".join(sorted(token_settings)))

    # Ports: the documented ones, each published on the same port inside, on the documented service.
    seen: dict[int, str] = {}
    for name, svc in services.items():
        for published, target in published_ports(svc):
            seen[published] = name
            report(published == target, f"{name}: port {published} published on the same container port", f"{published}:{target}")
    report(seen == EXPECTED_PORTS, "published ports are 12000, 12001 (tunnel_server), 12005 (httpbin), 12007 (test_backend)",
           ", ".join(f"{p}->{s}" for p, s in sorted(seen.items())))

    # Listen on 0.0.0.0 inside the containers.
    server_env = services.get("tunnel_server", {}).get("environment") or {}
    backend_env = services.get("test_backend", {}).get("environment") or {}
    httpbin_cmd = " ".join(map(str, services.get("httpbin", {}).get("command") or []))
    report(server_env.get("TunnelServer__PublicUrl") == "http://0.0.0.0:12000"
           and server_env.get("TunnelServer__TunnelUrl") == "http://0.0.0.0:12001",
           "tunnel_server listens on 0.0.0.0:12000 (public) and 0.0.0.0:12001 (tunnel)")
    report(backend_env.get("ASPNETCORE_URLS") == "http://0.0.0.0:12007", "test_backend listens on 0.0.0.0:12007")
    report("-b 0.0.0.0:12005" in httpbin_cmd and "-k gevent" in httpbin_cmd and "httpbin:app" in httpbin_cmd,
           "httpbin runs gunicorn -k gevent on 0.0.0.0:12005", httpbin_cmd)

    # Clients: session, backend, server.
    for name, (session, backend) in EXPECTED_CLIENTS.items():
        cenv = services.get(name, {}).get("environment") or {}
        report(cenv.get("TunnelClient__Session") == session and cenv.get("TunnelClient__Backend") == backend
               and cenv.get("TunnelClient__Server") == "http://tunnel_server:12001",
               f"{name}: session {session} -> {backend} via http://tunnel_server:12001")

    # Builds, Dockerfiles, health checks, start order.
    healthy: dict[str, bool] = {}
    checked: set[Path] = set()
    for name, svc in services.items():
        build = svc.get("build")
        has_health = bool(svc.get("healthcheck")) and not (svc.get("healthcheck") or {}).get("disable")
        if build:
            context = (DEV_DIR / (build if isinstance(build, str) else build.get("context", "."))).resolve()
            dockerfile = context / (build.get("dockerfile", "Dockerfile") if isinstance(build, dict) else "Dockerfile")
            if report(dockerfile.is_file(), f"{name}: build.dockerfile exists", str(dockerfile.relative_to(REPO) if dockerfile.is_relative_to(REPO) else dockerfile)):
                if dockerfile not in checked:
                    checked.add(dockerfile)
                    check_dockerfile(context, dockerfile, rules)
                check_expose(name, dockerfile, {p for p, _ in published_ports(svc)})
                has_health = has_health or dockerfile_has_healthcheck(context, dockerfile)
        else:
            report(bool(svc.get("image")), f"{name}: has an image", str(svc.get("image")))
        healthy[name] = has_health
        report(has_health, f"{name}: has a healthcheck")

    for name, svc in services.items():
        deps = svc.get("depends_on") or {}
        if isinstance(deps, list):
            deps = {d: {} for d in deps}
        for dep, spec in deps.items():
            report(dep in services and healthy.get(dep, False) and (spec or {}).get("condition") == "service_healthy",
                   f"{name}: depends_on {dep} (exists, has a healthcheck, condition service_healthy)")
    for name in EXPECTED_CLIENTS:
        deps = services.get(name, {}).get("depends_on") or {}
        backend_service = EXPECTED_CLIENTS[name][1].split("//")[1].split(":")[0]
        report("tunnel_server" in deps and backend_service in deps, f"{name}: starts after tunnel_server and {backend_service}")

    print(f"static checks: {passed} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
