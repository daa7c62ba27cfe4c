#!/usr/bin/env bash
# A test CA and a server certificate it signs for 127.0.0.1 and localhost, made with openssl as in
# docs/operations.md "TLS", for the MQTT-over-TLS benchmarks (bench/run.sh with TLS=1,
# bench/tls-providers.sh). Nothing here is a secret: the keys live and die with one run, and are
# world-readable.
#
#   bench/tls-cert.sh DIR [ec|rsa]
#
# ec (default): P-256 keys, the recipe's; rsa: 2048-bit keys (the server signs each full handshake
# with its key, so the key type is part of what a handshake costs). Writes into DIR (created):
#   ca.pem       the CA certificate: what clients trust
#   server.pem   the server certificate (SAN IP:127.0.0.1, DNS:localhost; serverAuth)
#   server.key   its private key, unencrypted PKCS#8 (the form Fieldline reads)
#   server.p12   certificate and key in a PKCS#12 keystore, password "fieldline-bench" (HiveMQ CE)
set -euo pipefail

dir=${1:-}
key=${2:-ec}
if [ -z "$dir" ] || { [ "$key" != ec ] && [ "$key" != rsa ]; }; then
  echo "usage: bench/tls-cert.sh DIR [ec|rsa]" >&2
  exit 2
fi
case "$key" in
  ec) newkey=(-newkey ec -pkeyopt ec_paramgen_curve:P-256) ;;
  rsa) newkey=(-newkey rsa:2048) ;;
esac

mkdir -p "$dir"
cd "$dir"
openssl req -x509 "${newkey[@]}" -nodes -days 30 -subj "/CN=Fieldline bench CA" \
  -keyout ca.key -out ca.pem 2>/dev/null
openssl req "${newkey[@]}" -nodes -subj "/CN=127.0.0.1" -keyout server-raw.key -out server.csr 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n' >server.ext
openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 30 \
  -extfile server.ext -out server.pem 2>/dev/null
openssl pkcs8 -topk8 -nocrypt -in server-raw.key -out server.key
openssl pkcs12 -export -in server.pem -inkey server.key -name server \
  -passout pass:fieldline-bench -out server.p12
rm -f server-raw.key server.csr server.ext ca.srl
# Readable by all: Mosquitto started as root drops to its own user before it reads its key.
chmod 644 server.key server.p12
openssl verify -CAfile ca.pem server.pem >/dev/null
echo "tls-cert: $key CA and server certificate for 127.0.0.1 in $dir"
