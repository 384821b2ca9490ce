"""Passwords typed on a command line: `sshpass -p '…'`, `mysql -pSECRET`, `PGPASSWORD=… psql`.

These tools take the password itself as an argument or an environment variable, so any value that
is not a reference ($VAR, $(pass show …)), a file or a placeholder is the secret. The prompting
forms (`mysql -u root -p`, `sshpass -f file`, `sshpass -e`) carry none.
"""

from __future__ import annotations

import re

from chalicelib.credentials.checks import is_reference_or_placeholder

_VALUE = r"(?:'(?P<q1>[^'\n]{1,128})'|\"(?P<q2>[^\"\n]{1,128})\"|(?P<bare>[^\s'\"|;&<>]{1,128}+))"
_SSHPASS = re.compile(rf"(?<![\w\-])sshpass[ \t]{{1,4}}(?:-[A-Za-z][ \t]{{1,4}}(?![-])\S{{1,64}}[ \t]{{1,4}})?-p[ \t]{{0,4}}{_VALUE}")
# mysql's -pSECRET (no space: `-p VALUE` would prompt and read VALUE as a database name)
_MYSQL = re.compile(
    r"(?<![\w\-])(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlshow|mysqlcheck|mariadb|mariadb-dump)"
    rf"(?:[ \t]{{1,4}}[^\s|;&]{{1,80}}+){{0,12}}?[ \t]{{1,4}}-p{_VALUE}"
)
# the variable set for one command: `PGPASSWORD=… psql` (a bare `export PGPASSWORD=…` is an assignment)
_ENV = re.compile(rf"(?<![\w\-])(?:PGPASSWORD|MYSQL_PWD|REDISCLI_AUTH|SSHPASS)={_VALUE}(?=[ \t]{{1,4}}(?:[A-Z_]{{2,32}}=[^\s]{{0,64}}[ \t]{{1,4}}){{0,3}}"
                  r"(?:psql|pg_dump|pg_dumpall|pg_restore|pgbench|createdb|dropdb|vacuumdb|mysql|mysqldump|mysqladmin|redis-cli|sshpass)\b)")
_REDIS = re.compile(rf"(?<![\w\-])redis-cli(?:[ \t]{{1,4}}[^\s|;&]{{1,80}}+){{0,12}}?[ \t]{{1,4}}(?:-a|--pass)[ \t]{{1,4}}{_VALUE}")
_CURL_USER = re.compile(r"(?<![\w\-])(?:curl|wget|http)(?:[ \t]{1,4}[^\s|;&]{1,200}+){0,12}?[ \t]{1,4}(?:-u|--user)[ \t]{1,4}"
                        r"(?:'[^':\n]{1,64}:(?P<q1>[^'\n]{1,128})'|\"[^\":\n]{1,64}:(?P<q2>[^\"\n]{1,128})\""
                        r"|[^\s:'\"]{1,64}:(?P<bare>[^\s'\"|;&<>]{1,128}+))")
_RULES = (("sshpass", _SSHPASS), ("-p", _MYSQL), ("=", _ENV), ("redis-cli", _REDIS), ("-u", _CURL_USER), ("--user", _CURL_USER))


_SHELL_REFERENCE = re.compile(r"\$[({A-Za-z_]|`")
_CAPS_AND_DIGITS = re.compile(r"(?=[A-Z0-9]*[0-9])[A-Z0-9]+")  # 'GIE415QKR' is a password, 'DB_PASS' a name


def _given(value: str, quoted: bool) -> bool:
    """A password written out, not a reference, a file, a placeholder or a flag."""
    if len(value) < 4 or _SHELL_REFERENCE.search(value) or value.startswith(("/", "~", "./", "@")):
        return False
    if value.startswith("-") and not quoted:
        return False
    return _CAPS_AND_DIGITS.fullmatch(value) is not None or not is_reference_or_placeholder(value)


def find_command_password(text: str, low: str) -> str | None:
    """A password given to sshpass, mysql, psql (PGPASSWORD), redis-cli or curl on a command line."""
    for piece, pattern in _RULES:
        if piece not in text:
            continue
        for m in pattern.finditer(text):
            value = m.group("q1") or m.group("q2") or m.group("bare") or ""
            if _given(value, quoted=not m.group("bare")):
                return "command_line_password"
    return None
