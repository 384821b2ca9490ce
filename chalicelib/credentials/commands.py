"""Passwords typed on a command line: `sshpass -p '…'`, `mysql -pSECRET`, `PGPASSWORD=… psql`.

These tools take the password itself as an argument or an environment variable, so any value that
is not a reference ($VAR, $(pass show …)), a file or a placeholder is the secret. The prompting
forms (`mysql -u root -p`, `sshpass -f file`, `sshpass -e`) carry none.
"""

from __future__ import annotations

import re

from chalicelib.credentials.checks import is_reference_or_placeholder

_VALUE = r"(?:'(?P<q1>[^'\n]{1,128})'|\"(?P<q2>[^\"\n]{1,128})\"|(?P<bare>[^\s'\"|;&<>]{1,128}+))"
_SSHPASS = re.compile(
    rf"(?<![\w\-])sshpass[ \t]{{1,4}}(?:-[A-Za-z][ \t]{{1,4}}(?![-])\S{{1,64}}[ \t]{{1,4}})?-p[ \t]{{0,4}}{_VALUE}"
)
# mysql's -pSECRET (no space: `-p VALUE` would prompt and read VALUE as a database name)
_MYSQL = re.compile(
    r"(?<![\w\-])(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlshow|mysqlcheck|mariadb|mariadb-dump)"
    rf"(?:[ \t]{{1,4}}[^\s|;&]{{1,80}}+){{0,12}}?[ \t]{{1,4}}-p{_VALUE}"
)
# the variable set for one command: `PGPASSWORD=… psql` (a bare `export PGPASSWORD=…` is an assignment)
_ENV = re.compile(
    rf"(?<![\w\-])(?:PGPASSWORD|MYSQL_PWD|REDISCLI_AUTH|SSHPASS)={_VALUE}(?=[ \t]{{1,4}}(?:[A-Z_]{{2,32}}=[^\s]{{0,64}}[ \t]{{1,4}}){{0,3}}"
    r"(?:psql|pg_dump|pg_dumpall|pg_restore|pgbench|createdb|dropdb|vacuumdb|mysql|mysqldump|mysqladmin|redis-cli|sshpass)\b)"
)
_REDIS = re.compile(
    rf"(?<![\w\-])redis-cli(?:[ \t]{{1,4}}[^\s|;&]{{1,80}}+){{0,12}}?[ \t]{{1,4}}(?:-a|--pass)[ \t]{{1,4}}{_VALUE}"
)
_CURL_USER = re.compile(
    r"(?<![\w\-])(?:curl|wget|http)(?:[ \t]{1,4}[^\s|;&]{1,200}+){0,12}?[ \t]{1,4}(?:-u|--user)[ \t]{1,4}"
    r"(?:'[^':\n]{1,64}:(?P<q1>[^'\n]{1,128})'|\"[^\":\n]{1,64}:(?P<q2>[^\"\n]{1,128})\""
    r"|[^\s:'\"]{1,64}:(?P<bare>[^\s'\"|;&<>]{1,128}+))"
)
# Tools whose flag takes the password itself: `mongo -p X`, `docker login -p X`, `sqlcmd -P X`, `ldapsearch -w X`,
# `keytool -storepass X`. Each tool has its own flag (ssh's -p and docker run's -p are ports); registry and
# cloud logins count only after the word login.
_TOOL_FLAGS = {
    "mongo": "-p",
    "mongosh": "-p",
    "mongodump": "-p",
    "mongorestore": "-p",
    "mongoexport": "-p",
    "mongoimport": "-p",
    "docker": "-p",
    "podman": "-p",
    "buildah": "-p",
    "helm": "-p",
    "az": "-p",
    "cf": "-p",
    "oc": "-p",
    "sqlcmd": "-P",
    "bcp": "-P",
    "ldapsearch": "-w",
    "ldapmodify": "-w",
    "ldapadd": "-w",
    "ldapdelete": "-w",
    "ldappasswd": "-w",
    "keytool": "-storepass",
    "jarsigner": "-storepass",
}
_NEEDS_LOGIN = frozenset({"docker", "podman", "buildah", "helm", "az", "cf", "oc"})
_TOOL = re.compile(
    rf"(?<![\w\-./])(?P<tool>{'|'.join(sorted(_TOOL_FLAGS, key=len, reverse=True))})(?P<args>(?:[ \t]{{1,4}}[^\s|;&]{{1,200}}+){{0,12}}?)"
    rf"[ \t]{{1,4}}(?P<flag>-p|-P|-w|-storepass|-keypass|-srcstorepass|-deststorepass|-srckeypass|-destkeypass)[ \t]{{1,4}}{_VALUE}"
)
_SMB = re.compile(
    rf"(?<![\w\-])(?:smbclient|rpcclient|smbmap|net)(?:[ \t]{{1,4}}[^\s|;&]{{1,200}}+){{0,12}}?[ \t]{{1,4}}"
    rf"(?:-U|--user(?:=|[ \t]{{1,4}}))[ \t]{{0,4}}['\"]?[^\s%'\"]{{1,64}}%{_VALUE}"
)
_OPENSSL = re.compile(rf"(?<![\w\-])-pass(?:in|out)[ \t]{{1,4}}pass:{_VALUE}")
# `--password 'two words'`: a quoted value with spaces, which the assignment rule (one token) does not read
_QUOTED_FLAG = re.compile(
    r"(?<![\w\-])--?(?:password|passwd|pass|pwd)(?:=|[ \t]{1,4})(?:'(?P<q1>[^'\n]{1,128})'|\"(?P<q2>[^\"\n]{1,128})\")"
    r"(?P<bare>(?!))?"
)
_PORTISH = re.compile(r"[0-9:.\-]+")
_RULES = (
    ("sshpass", _SSHPASS),
    ("-p", _MYSQL),
    ("=", _ENV),
    ("redis-cli", _REDIS),
    ("-u", _CURL_USER),
    ("--user", _CURL_USER),
    ("%", _SMB),
    ("pass:", _OPENSSL),
    ("pass", _QUOTED_FLAG),
)


_SHELL_REFERENCE = re.compile(r"\$[({A-Za-z_]|`")
_CAPS_AND_DIGITS = re.compile(r"(?=[A-Z0-9]*[0-9])[A-Z0-9]+")  # 'GIE415QKR' is a password, 'DB_PASS' a name


def _given(value: str, quoted: bool) -> bool:
    """A password written out, not a reference, a file, a placeholder or a flag."""
    if len(value) < 4 or _SHELL_REFERENCE.search(value) or value.startswith(("/", "~", "./", "@")):
        return False
    if value.startswith("-") and not quoted:
        return False
    return _CAPS_AND_DIGITS.fullmatch(value) is not None or not is_reference_or_placeholder(value)


_TOOL_START = frozenset(" \t\n;|&(`")


def _tool_matches(text: str, low: str) -> list[re.Match[str]]:
    """The commands that start with one of the tools (as a word), found from the tool's name."""
    found: list[re.Match[str]] = []
    for tool in _TOOL_FLAGS:
        at = low.find(tool + " ")
        while at >= 0:
            if at == 0 or low[at - 1] in _TOOL_START:
                m = _TOOL.match(text, at)
                if m:
                    found.append(m)
            at = low.find(tool + " ", at + 1)
    return found


def _tool_password(text: str, low: str) -> bool:
    for m in _tool_matches(text, low):
        tool, flag = m.group("tool"), m.group("flag")
        wanted = _TOOL_FLAGS[tool]
        if flag != wanted and not (wanted == "-storepass" and flag.endswith("pass")):
            continue
        if tool in _NEEDS_LOGIN and "login" not in m.group("args"):
            continue
        value = m.group("q1") or m.group("q2") or m.group("bare") or ""
        if not _PORTISH.fullmatch(value) and _given(value, quoted=not m.group("bare")):
            return True
    return False


def find_command_password(text: str, low: str) -> str | None:
    """A password given to sshpass, mysql, psql (PGPASSWORD), redis-cli, curl, mongo, registry and cloud
    logins, sqlcmd, ldapsearch, keytool, smbclient or openssl on a command line."""
    for piece, pattern in _RULES:
        if piece not in text:
            continue
        for m in pattern.finditer(text):
            value = m.group("q1") or m.group("q2") or m.group("bare") or ""
            if _given(value, quoted=not m.group("bare")):
                return "command_line_password"
    if " -" in text and _tool_password(text, low):
        return "command_line_password"
    return None
