#!/usr/bin/env bash
# A development certificate authority for sreh's HTTPS examples and tests (not for production).
#
#   scripts/dev-ca.sh DIR [NAME...]
#       makes DIR/ca.pem + DIR/ca.key (once), then for each NAME a certificate signed by it:
#       DIR/NAME.pem + DIR/NAME.key, valid for the DNS name NAME, localhost and 127.0.0.1, usable
#       by a server and as a client certificate (mutual TLS). Default NAME: server. Existing
#       files are replaced (a new serial: what a reload on SIGHUP picks up).
set -euo pipefail
dir="${1:?usage: $0 DIR [NAME...]}"
shift
names=("$@")
[ ${#names[@]} -gt 0 ] || names=(server)
command -v openssl >/dev/null || { echo "dev-ca.sh: openssl not found" >&2; exit 1; }
mkdir -p "$dir"
if [ ! -f "$dir/ca.pem" ]; then
  openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj "/CN=sreh dev CA" \
    -keyout "$dir/ca.key" -out "$dir/ca.pem" 2>/dev/null
fi
for name in "${names[@]}"; do
  [[ "$name" =~ ^[A-Za-z0-9._-]+$ ]] || { echo "dev-ca.sh: bad name '$name'" >&2; exit 1; }
  cat >"$dir/$name.ext" <<EXT
subjectAltName = DNS:$name, DNS:localhost, IP:127.0.0.1
extendedKeyUsage = serverAuth, clientAuth
EXT
  openssl req -newkey rsa:2048 -nodes -subj "/CN=$name" -keyout "$dir/$name.key" \
    -out "$dir/$name.csr" 2>/dev/null
  openssl x509 -req -in "$dir/$name.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca.key" \
    -set_serial "0x$(openssl rand -hex 8)" -days 30 -extfile "$dir/$name.ext" \
    -out "$dir/$name.pem" 2>/dev/null
  rm -f "$dir/$name.csr" "$dir/$name.ext"
  chmod 600 "$dir/$name.key"
done
echo "$dir"
