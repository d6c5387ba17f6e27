#!/usr/bin/env python3
"""Replays deploy/Dockerfile without a container engine (CI has none, and no registry: only Debian's mirror).

Reads the Dockerfile, so the check follows it when it changes. The build stage: copies into an empty directory
exactly what its COPY lines copy (a missing source fails, as it would fail `docker build`), installs its `apt-get
install` packages, and runs its other RUN lines there (`/out` redirected into the scratch directory). The runtime
stage: every library the built binary loads, by `ldd` and by /proc/PID/maps while it serves (which also shows what
libwebsockets dlopens, its libev plugin), must belong to a package the stage has: Debian's required packages and apt
(what debian:bookworm-slim holds), or one its `apt-get install` names, or their dependencies. And every library the
binary links directly must have its development package (the `.so` link) among the build stage's packages. Then the
binary must answer /healthz. Exits 1 naming each problem.

With --debug-build the build stage's `swift build -c release` runs as `-c debug` (everything else as written: the
same files, packages, flags and static Swift runtime). The libraries a binary links and loads come from the
package's link settings, which do not depend on the configuration, so every check above means the same; only the
optimiser's time is saved, and with it most of the replay's (docs/OPERATIONS.md, "Container").

Usage: python3 .ci/image-replay.py [--debug-build] [Dockerfile]   (from anywhere; as root to install packages)
"""

import functools
import glob
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def instructions(path):
    """The Dockerfile's instructions as (KEYWORD, text), continuation lines joined, comments dropped."""
    result, pending = [], ""
    with open(path) as f:
        for raw in f:
            line = raw.rstrip("\n")
            if not pending and (not line.strip() or line.lstrip().startswith("#")):
                continue
            if line.lstrip().startswith("#"):
                continue
            if line.endswith("\\"):
                pending += line[:-1] + " "
                continue
            text = (pending + line).strip()
            pending = ""
            keyword, _, rest = text.partition(" ")
            result.append((keyword.upper(), rest.strip()))
    return result


def stages(path):
    """Splits the instructions at each FROM: [(from-line, [instructions])]."""
    out = []
    for keyword, rest in instructions(path):
        if keyword == "FROM":
            out.append((rest, []))
        elif out:
            out[-1][1].append((keyword, rest))
    return out


def apt_packages(run):
    """The package names an `apt-get install` in one RUN line names (options skipped)."""
    packages = []
    for command in re.split(r"&&|;|\|\|", run):
        words = shlex.split(command)
        if len(words) >= 2 and words[0] == "apt-get" and "install" in words:
            packages += [w for w in words[words.index("install") + 1:] if not w.startswith("-")]
    return packages


def run(command, **kwargs):
    print("+", command if isinstance(command, str) else " ".join(command), flush=True)
    return subprocess.run(command, check=True, **kwargs)


def output(command):
    return subprocess.run(command, capture_output=True, text=True).stdout


def candidates(path):
    """`path` and its other spellings under merged /usr (dpkg knows each file under the name its package gave)."""
    spellings = []
    for p in (path, os.path.realpath(path)):  # a link's own name first: a `.so` link is the -dev package's
        spellings += [p, p[4:] if p.startswith("/usr/") else "/usr" + p]
    return list(dict.fromkeys(spellings))


OWNERS = {}


def learn_owners(paths):
    """Asks dpkg once which packages hold `paths` (in all their spellings), for `owner`."""
    wanted = [c for path in paths for c in candidates(path) if c not in OWNERS]
    if not wanted:
        return
    for c in wanted:
        OWNERS[c] = None
    for line in output(["dpkg-query", "--search", "--"] + wanted).splitlines():
        if line.startswith("diversion ") or ": " not in line:
            continue
        packages, _, found = line.partition(": ")
        OWNERS[found.strip()] = packages.split(",")[0].split(":")[0].strip()


def owner(path):
    """The Debian package holding `path`, trying the merged-/usr spellings; None if no package does."""
    learn_owners([path])
    return next((OWNERS[c] for c in candidates(path) if OWNERS.get(c)), None)


def closure(packages):
    """The packages plus everything they depend on (Depends, Pre-Depends), by apt-cache."""
    text = output(["apt-cache", "depends", "--recurse", "--no-recommends", "--no-suggests", "--no-conflicts",
                   "--no-breaks", "--no-replaces", "--no-enhances"] + packages)
    names = {line.strip() for line in text.splitlines() if line and not line.startswith(" ")}
    names |= {m.group(1) for m in re.finditer(r"Depends: ([a-z0-9.+-]+)", text)}
    return {n.split(":")[0] for n in names if not n.startswith("<")}


@functools.lru_cache(maxsize=None)
def base_image():
    """What a minimal Debian image such as bookworm-slim holds: Debian's Priority: required packages and apt, with
    their dependencies (libc6 itself is only `optional`, pulled in by them)."""
    return frozenset(closure(sorted(required_packages() | {"apt"})))


def required_packages():
    """Debian's Priority: required packages."""
    names, name = set(), None
    for line in output(["apt-cache", "dumpavail"]).splitlines():
        if line.startswith("Package: "):
            name = line.split(": ", 1)[1]
        elif line.startswith("Priority: required") and name:
            names.add(name)
    return names


def libraries_of(pid):
    paths = set()
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            fields = line.split()
            if len(fields) >= 6 and ".so" in fields[5] and fields[5].startswith("/"):
                paths.add(fields[5])
    return paths


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


STARTED = time.monotonic()


def phase(text):
    print(f"image-replay: [{time.monotonic() - STARTED:6.0f} s] {text}", flush=True)


def main():
    arguments = sys.argv[1:]
    debug_build = "--debug-build" in arguments
    arguments = [a for a in arguments if a != "--debug-build"]
    dockerfile = os.path.abspath(arguments[0] if arguments else os.path.join(ROOT, "deploy/Dockerfile"))
    all_stages = stages(dockerfile)
    if len(all_stages) < 2:
        sys.exit(f"image-replay: {dockerfile} has {len(all_stages)} stage(s); expected a build and a runtime stage")
    (build_from, build), (runtime_from, runtime) = all_stages[0], all_stages[-1]
    print(f"image-replay: build stage FROM {build_from}; runtime stage FROM {runtime_from}")
    problems = []

    scratch = tempfile.mkdtemp(prefix="cairn-image-")
    out_dir = os.path.join(scratch, "out")
    workdir = os.path.join(scratch, "src")
    os.makedirs(workdir)
    build_packages = []
    try:
        # Build stage.
        for keyword, rest in build:
            if keyword == "WORKDIR":
                workdir = os.path.join(scratch, "src")  # the stage's one WORKDIR (/src) maps here
                os.makedirs(workdir, exist_ok=True)
            elif keyword == "COPY":
                words = shlex.split(rest)
                if any(w.startswith("--") for w in words):
                    problems.append(f"build stage: unsupported COPY {rest}")
                    continue
                *sources, destination = words
                for source in sources:
                    matches = glob.glob(os.path.join(ROOT, source))
                    if not matches and not glob.has_magic(source):
                        problems.append(f"build stage: COPY {source}: no such file in the repository")
                    for match in matches:
                        target = os.path.join(workdir, destination)
                        if os.path.isdir(match):
                            shutil.copytree(match, target if not destination.endswith("/") or len(sources) == 1
                                            else os.path.join(target, os.path.basename(match)), dirs_exist_ok=True)
                        else:
                            os.makedirs(target if destination.endswith("/") else os.path.dirname(target),
                                        exist_ok=True)
                            shutil.copy2(match, target)
            elif keyword == "RUN":
                packages = apt_packages(rest)
                if packages:
                    build_packages += packages
                    run(["bash", os.path.join(ROOT, "deploy/install-deps.sh")] + packages,
                        stdout=subprocess.DEVNULL)
                else:
                    command = rest.replace("/out/", out_dir + "/")
                    if debug_build and "swift build" in command:
                        if "-c release" not in command:
                            problems.append(f"build stage: --debug-build, but no `-c release` in RUN {rest}")
                        command = command.replace("-c release", "-c debug")
                    phase("RUN " + command)
                    run(["bash", "-c", "set -e; " + command], cwd=workdir)
            elif keyword in ("ENV", "ARG", "LABEL"):
                problems.append(f"build stage: {keyword} is not replayed; teach .ci/image-replay.py")

        phase("build stage done")
        # Runtime stage: what it installs and copies.
        runtime_packages, binary = [], None
        for keyword, rest in runtime:
            if keyword == "RUN":
                runtime_packages += apt_packages(rest)
            elif keyword == "COPY":
                words = shlex.split(rest)
                if words[0].startswith("--from="):
                    source = words[1]
                    path = source.replace("/out/", out_dir + "/")
                    if not os.path.exists(path):
                        problems.append(f"runtime stage: COPY --from {source}: the build stage made no such file")
                    elif source.endswith("/cairn"):
                        binary = path
                else:
                    for source in words[:-1]:
                        if not os.path.exists(os.path.join(ROOT, source)):
                            problems.append(f"runtime stage: COPY {source}: no such file in the repository")
        if binary is None:
            problems.append("runtime stage: copies no cairn binary from the build stage")
            raise SystemExit

        missing = [p for p in runtime_packages if not output(["apt-cache", "show", "--no-all-versions", p])]
        problems += [f"runtime stage: apt-get install {p}: no such Debian package" for p in missing]
        allowed = closure(runtime_packages) | base_image()

        def check(paths, how):
            learn_owners(paths)
            for path in sorted(paths):
                package = owner(path)
                if package is None:
                    problems.append(f"{how}: {path} belongs to no Debian package (not in the image)")
                elif package not in allowed:
                    problems.append(f"{how}: {path} is in {package}, which the runtime stage does not install")

        # ldd: every library the dynamic linker loads at start.
        ldd = output(["ldd", binary])
        print(ldd, end="")
        for line in ldd.splitlines():
            if "not found" in line:
                problems.append(f"ldd: {line.strip()}")
        check({m.group(1) for m in re.finditer(r"=> (/\S+)", ldd)}, "ldd")

        # The build stage must install each directly linked library's development package (its `.so` link).
        for needed in re.findall(r"\(NEEDED\).*\[(.+)\]", output(["readelf", "-d", binary])):
            loaded = re.search(re.escape(needed) + r" => (/\S+)", ldd)
            if not loaded:
                continue
            runtime_package = owner(loaded.group(1))
            if runtime_package in base_image():
                continue  # libc and friends: in every image, their -dev packages in every build image
            stem = needed.split(".so")[0]
            dev = owner(os.path.join(os.path.dirname(loaded.group(1)), stem + ".so"))
            if dev and dev not in build_packages:
                problems.append(f"build stage: links {needed} but does not install {dev} (its .so link)")

        # Serve, then what the running process has mapped (dlopened plugins included), and /healthz.
        port = free_port()
        data = os.path.join(scratch, "data")
        hub = subprocess.Popen([binary, "serve", "--host", "127.0.0.1", "--port", str(port), "--data", data],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        try:
            healthy = False
            for _ in range(100):
                if subprocess.run([binary, "health", "--port", str(port)], capture_output=True).returncode == 0:
                    healthy = True
                    break
                if hub.poll() is not None:
                    break
                time.sleep(0.2)
            if not healthy:
                problems.append("the release binary did not answer /healthz")
            else:
                print(f"image-replay: /healthz answered on 127.0.0.1:{port}")
                check(libraries_of(hub.pid), "mapped while serving")
        finally:
            hub.terminate()
            log = hub.communicate(timeout=30)[0].decode(errors="replace")
            if not healthy:
                print(log)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
        for problem in problems:
            print("image-replay:", problem)
    if problems:
        sys.exit(1)
    phase("the build stage builds, and the runtime stage installs every library the binary loads")


if __name__ == "__main__":
    main()
