#!/usr/bin/env bash
# A real WebDAV server for the tests and `make dev`: Apache httpd with mod_dav/mod_dav_fs (Debian's apache2,
# installed by scripts/setup.sh), on loopback, with Basic auth, serving <dir>/dav. Runs in the foreground as one
# process (apache2 -X) until it is killed; the caller stops it. Start it in a process group of its own (setsid,
# `timeout`, or process_group(0) from Rust), so that nothing Apache signals on its way out reaches the caller.
# Keep-alive is off: with one process, a client's idle keep-alive connection would hold up every other client
# (the Worker's held the native server's first request for 5 s). Prefork processes (-DFOREGROUND) were tried
# instead and made the first request after start fail now and then.
#
#   scripts/webdav-server.sh <work dir> <port> <user> <password>
#
# The files go in <work dir>/dav (Zotero's folder is <work dir>/dav/zotero, which this creates); the config, the
# password file, the lock database and the logs in <work dir>/apache.
set -euo pipefail
work="$(mkdir -p "$1" && cd "$1" && pwd)"
port="$2" user="$3" password="$4"
apache=/usr/sbin/apache2
modules=/usr/lib/apache2/modules
if [ ! -x "$apache" ] || [ ! -f "$modules/mod_dav_fs.so" ]; then
  echo "webdav-server: Apache httpd with mod_dav is not installed; run scripts/setup.sh (apt-get install apache2)" >&2
  exit 1
fi
conf="$work/apache"
mkdir -p "$work/dav/zotero" "$conf/lock"
# Apache started as root serves as an unprivileged user, who must be able to write the files and the lock db.
run_user="$(id -un)" run_group="$(id -gn)"
if [ "$(id -u)" = 0 ]; then
  run_user=www-data run_group=www-data
  chown -R www-data:www-data "$work/dav" "$conf/lock"
  # …and reach them: let it through the folders above (a mktemp directory is 0700).
  dir="$work"
  while [ "$dir" != / ]; do
    chmod o+x "$dir" 2>/dev/null || true
    dir="$(dirname "$dir")"
  done
fi
htpasswd -cbB "$conf/htpasswd" "$user" "$password" 2>/dev/null
cat >"$conf/httpd.conf" <<CONF
ServerName 127.0.0.1
ServerRoot "$conf"
Listen 127.0.0.1:$port
PidFile "$conf/httpd.pid"
ErrorLog "$conf/error.log"
LogLevel warn
User $run_user
Group $run_group
LoadModule mpm_prefork_module $modules/mod_mpm_prefork.so
KeepAlive Off
LoadModule authn_core_module $modules/mod_authn_core.so
LoadModule authn_file_module $modules/mod_authn_file.so
LoadModule authz_core_module $modules/mod_authz_core.so
LoadModule authz_user_module $modules/mod_authz_user.so
LoadModule auth_basic_module $modules/mod_auth_basic.so
LoadModule dav_module $modules/mod_dav.so
LoadModule dav_fs_module $modules/mod_dav_fs.so
LogFormat "%h \"%r\" %>s %b" short
CustomLog "$conf/access.log" short
DocumentRoot "$work/dav"
DavLockDB "$conf/lock/DavLock"
# Large attachments (the server itself caps what it reads and writes).
LimitRequestBody 0
<Directory "$work/dav">
  Dav On
  AuthType Basic
  AuthName "zotero-mcp test WebDAV"
  AuthBasicProvider file
  AuthUserFile "$conf/htpasswd"
  Require valid-user
</Directory>
CONF
exec "$apache" -X -f "$conf/httpd.conf"
