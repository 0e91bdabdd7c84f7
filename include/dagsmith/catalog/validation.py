"""Validation and security scanning of an upload, before anything about it is stored.

Microservices are untrusted code. Every check returns findings; a blocking finding rejects the upload.
Well-kept scanners do what they are good at (bandit for dangerous calls, detect-secrets for credentials);
the syntax-tree facts add what they do not cover (suspicious imports, paths built from parameters).
"""

from __future__ import annotations

import ast
import logging
import re
import tempfile
from pathlib import Path

from dagsmith.catalog.facts import CodeFacts, extract_facts
from dagsmith.catalog.source import ENTRYPOINT, REQUIRED_FILES, REQUIREMENTS, ManifestError, ServiceSource
from dagsmith.models.catalog import Category, Finding
from dagsmith.runtime.packages import not_provided, unavailable

MAX_FILE_BYTES = 256 * 1024
MAX_TOTAL_BYTES = 1024 * 1024
MAX_FILES = 25
NAME_PATTERN = re.compile(r"^[a-z][a-z0-9_]{2,63}$")
PINNED = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*(\[[A-Za-z0-9,._-]+\])?==[A-Za-z0-9.+!*-]+(\s*;.+)?$")

#: bandit tests whose findings reject an upload, with the red flag they stand for.
BLOCKING_BANDIT = {
    "B102": "exec() runs arbitrary code",
    "B307": "eval() runs arbitrary code",
    "B602": "shell command injection (subprocess with shell=True)",
    "B604": "shell command injection (call with shell=True)",
    "B605": "shell command injection (a process started through a shell)",
    "B609": "shell command injection (wildcard in a shell command)",
    "B608": "SQL built from strings (SQL injection)",
    "B105": "hardcoded credential",
    "B106": "hardcoded credential",
    "B107": "hardcoded credential",
    "B310": "network access (urllib urlopen)",
    "B506": "unsafe yaml.load can run code",
    "B601": "shell command over SSH (paramiko)",
}
_CREDENTIAL_TESTS = {"B105", "B106", "B107"}
#: Modules a data-processing microservice has no business importing.
SUSPICIOUS_MODULES = {
    "socket": "raw network sockets (data exfiltration risk)",
    "ctypes": "native code through ctypes",
    "cffi": "native code through cffi",
    "pty": "pseudo-terminals (interactive shells)",
    "telnetlib": "network access (telnet)",
    "ftplib": "network access (FTP)",
    "smtplib": "network access (e-mail)",
    "paramiko": "network access (SSH)",
    "requests": "network access (HTTP)",
    "httpx": "network access (HTTP)",
    "aiohttp": "network access (HTTP)",
    "urllib.request": "network access (HTTP)",
    "http.client": "network access (HTTP)",
    "subprocess": "runs other programs",
    "marshal": "loads code objects",
}
#: Calls that run code or programs, flagged even where bandit's heuristics stay silent.
DANGEROUS_CALLS = {
    "eval": "eval() runs arbitrary code",
    "exec": "exec() runs arbitrary code",
    "compile": "compile() builds code at run time",
    "__import__": "__import__() loads modules chosen at run time",
    "os.system": "shell command injection (os.system)",
    "os.popen": "shell command injection (os.popen)",
    "os.execv": "replaces the process with another program",
    "os.execvp": "replaces the process with another program",
    "os.spawnv": "starts another program",
    "importlib.import_module": "loads modules chosen at run time",
}
_SYSTEM_PATHS = ("/etc/", "/root", "/proc/", "/sys/", "/home/", "/var/", "/usr/", "~/", "/dev/")
#: Importable module names whose distribution name differs (for the requirements cross-check).
_DISTRIBUTIONS = {"sklearn": "scikit-learn", "yaml": "pyyaml", "dagsmith_kit": "dagsmith-kit", "PIL": "pillow"}


def _requirement_findings(source: ServiceSource) -> list[Finding]:
    """Every requirement pinned exactly, to a package the runtime provides: nothing is installed for a service."""
    findings = []
    for line in source.requirements:
        if not PINNED.match(line):
            findings.append(Finding(
                check="requirements", file=REQUIREMENTS,
                message=f"'{line}' is not pinned to an exact version (write it as name==version)",
            ))
    missing = unavailable(line for line in source.requirements if PINNED.match(line))
    if missing:
        findings.append(Finding(check="requirements", file=REQUIREMENTS, message=not_provided(missing)))
    return findings


def _manifest_findings(source: ServiceSource) -> list[Finding]:
    try:
        manifest = source.manifest
    except ManifestError as exc:
        return [Finding(check="manifest", file="manifest.yaml", message=str(exc))]
    findings = []
    if not NAME_PATTERN.match(manifest.name):
        findings.append(Finding(
            check="manifest", file="manifest.yaml",
            message=f"name '{manifest.name}' must be 3-64 characters of lowercase letters, digits and _",
        ))
    if manifest.category and manifest.category not in {c.value for c in Category}:
        findings.append(Finding(
            check="manifest", file="manifest.yaml", blocking=False,
            message=f"unknown category '{manifest.category}' (known: {', '.join(c.value for c in Category)})",
        ))
    if not manifest.description:
        findings.append(Finding(check="manifest", file="manifest.yaml", blocking=False,
                                message="no description; the code-derived description will stand alone"))
    return findings


def _write_flat(files: dict[str, str], folder: Path) -> dict[str, str]:
    """Write the upload's files side by side into ``folder`` for a scanner; scanned path -> name in the upload."""
    paths = {}
    for name, text in files.items():
        path = folder / name.replace("/", "__")
        path.write_text(text, encoding="utf-8")
        paths[str(path)] = name
    return paths


def _bandit(files: dict[str, str]) -> list[Finding]:
    from bandit.core import config, manager

    logging.getLogger("bandit").setLevel(logging.CRITICAL)
    findings = []
    with tempfile.TemporaryDirectory(prefix="dagsmith-scan-") as folder:
        paths = _write_flat(files, Path(folder))
        scanner = manager.BanditManager(config.BanditConfig(), "file", quiet=True)
        scanner.discover_files(list(paths))
        scanner.run_tests()
        for issue in scanner.get_issue_list():
            flag = BLOCKING_BANDIT.get(issue.test_id)
            # bandit quotes the offending literal; for credentials that would print the secret itself
            text = "a password-like literal (value not shown)" if issue.test_id in _CREDENTIAL_TESTS else issue.text
            findings.append(Finding(
                check=f"security:{issue.test_id}", file=paths.get(issue.fname, issue.fname), line=issue.lineno,
                message=f"{flag}: {text}" if flag else text, blocking=flag is not None,
            ))
    return findings


def _secrets(files: dict[str, str]) -> list[Finding]:
    from detect_secrets import SecretsCollection
    from detect_secrets.settings import default_settings

    findings = []
    with tempfile.TemporaryDirectory(prefix="dagsmith-secrets-") as folder:
        collection = SecretsCollection()
        names = _write_flat(files, Path(folder))
        with default_settings():
            for path in names:
                collection.scan_file(path)
        for filename, secrets in collection.json().items():
            for secret in secrets:
                findings.append(Finding(
                    check="security:secret", file=names.get(filename, filename), line=secret.get("line_number"),
                    message=f"hardcoded credential ({secret['type']}); pass secrets at run time instead",
                ))
    return findings


def _facts_findings(name: str, facts: CodeFacts) -> list[Finding]:
    findings = []
    for module in sorted(facts.imports):
        for suspicious, why in SUSPICIOUS_MODULES.items():
            if module == suspicious or module.startswith(suspicious + "."):
                findings.append(Finding(check="security:import", file=name, message=f"imports {module}: {why}"))
    for symbol in sorted(facts.symbols):
        flag = DANGEROUS_CALLS.get(symbol)
        if flag:
            findings.append(Finding(check="security:call", file=name, message=f"calls {symbol}: {flag}"))
    for line in facts.calls_with_param_paths:
        findings.append(Finding(
            check="security:path", file=name, line=line,
            message="path traversal: a file path is built from a user-supplied parameter; "
                    "write only under the output bundle with fixed names",
        ))
    for literal in sorted(facts.literals):
        if "../" in literal or literal.startswith(_SYSTEM_PATHS):
            findings.append(Finding(
                check="security:path", file=name,
                message=f"path traversal: the code names '{literal}', outside its input and output bundles",
            ))
    return findings


def _imports_declared(source: ServiceSource, facts: CodeFacts) -> list[Finding]:
    import sys

    declared = {re.split(r"[\[=<>;]", r)[0].strip().lower().replace("_", "-") for r in source.requirements}
    missing = []
    for module in sorted(facts.top_modules):
        if module in sys.stdlib_module_names or module == "__future__":
            continue
        dist = _DISTRIBUTIONS.get(module, module).lower().replace("_", "-")
        if dist not in declared:
            missing.append(module)
    if not missing:
        return []
    return [Finding(check="requirements", file=REQUIREMENTS, blocking=False,
                    message=f"imports {', '.join(missing)} but requirements.txt does not list it")]


def size_findings(sizes: dict[str, int]) -> list[Finding]:
    """Limits on what an upload may weigh: checked on disk before reading, and again on the files read."""
    findings = [
        Finding(check="size", file=name, message=f"{size:,} bytes is over the {MAX_FILE_BYTES:,}-byte limit per file")
        for name, size in sizes.items() if size > MAX_FILE_BYTES
    ]
    if sum(sizes.values()) > MAX_TOTAL_BYTES:
        findings.append(Finding(check="size", message=f"{sum(sizes.values()):,} bytes in all is over the "
                                f"{MAX_TOTAL_BYTES:,}-byte limit for a microservice"))
    if len(sizes) > MAX_FILES:
        findings.append(Finding(check="size", message=f"{len(sizes)} files is over the limit of {MAX_FILES}"))
    return findings


def validate(source: ServiceSource) -> list[Finding]:
    """Every finding about an upload: size, structure, manifest, syntax, requirements (exact pins the runtime
    provides), security."""
    findings = size_findings({name: len(text.encode()) for name, text in source.files.items()})
    if findings:
        return findings
    findings += [
        Finding(check="structure", message=f"missing required file {name}")
        for name in REQUIRED_FILES if name not in source.files
    ]
    findings += _manifest_findings(source)
    findings += _requirement_findings(source)
    python_files = {name: text for name, text in source.files.items() if name.endswith(".py")}
    parsed: dict[str, CodeFacts] = {}
    for name, text in python_files.items():
        try:
            ast.parse(text, filename=name)
            parsed[name] = extract_facts(text)
        except SyntaxError as exc:
            findings.append(Finding(check="syntax", file=name, line=exc.lineno, message=f"syntax error: {exc.msg}"))
    if not parsed:
        return findings
    for name, facts in parsed.items():
        findings += _facts_findings(name, facts)
    findings += _bandit({n: python_files[n] for n in parsed})
    findings += _secrets(source.files)
    if ENTRYPOINT in parsed:
        findings += _imports_declared(source, parsed[ENTRYPOINT])
    return _dedupe(findings)


def _dedupe(findings: list[Finding]) -> list[Finding]:
    seen, unique = set(), []
    for finding in findings:
        key = (finding.check.split(":")[0], finding.file, finding.line, finding.message)
        if key not in seen:
            seen.add(key)
            unique.append(finding)
    return unique
