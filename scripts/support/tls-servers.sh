# Sourced by scripts/test (bash): a throwaway test CA, its certificates, and one nginx (one master
# process) with TLS servers on free loopback ports. See scripts/test's header for the variables.
#
#   tls_start HTTPBIN_URL FAULT_URL    makes the certificates, starts nginx, exports COURIER_TLS_*
#   tls_stop                           stops nginx by PID and removes the temporary folder
#   tls_run_with_test_ca WHAT CMD…     runs CMD with the test CA in the system bundle (Linux, see below)
#
# Everything lives in one `mktemp -d` folder: the CA's private keys are deleted as soon as the
# certificates are signed; the client key stays until tls_stop (the tests need it). nginx is
# installed with apt-get when missing (root, or sudo without a password).

tls_dir=""
tls_nginx_pid=""

tls_stop() {
    if [ -n "$tls_nginx_pid" ] && kill -0 "$tls_nginx_pid" 2>/dev/null; then
        kill "$tls_nginx_pid" 2>/dev/null || true
        for _ in $(seq 1 50); do kill -0 "$tls_nginx_pid" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$tls_nginx_pid" 2>/dev/null || true
    fi
    tls_nginx_pid=""
    if [ -n "$tls_dir" ] && [ -d "$tls_dir" ]; then rm -rf "$tls_dir"; fi
    tls_dir=""
}

tls_install_nginx() {
    command -v nginx >/dev/null 2>&1 && return 0
    [ -x /usr/sbin/nginx ] && return 0
    echo "scripts/test: nginx is missing; installing nginx-light with apt-get"
    local sudo=""
    if [ "$(id -u)" -ne 0 ]; then sudo="sudo -n"; fi
    $sudo apt-get update -qq >/dev/null && $sudo env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y -qq nginx-light >/dev/null
}

# Signs $1.csr with the CA in $2 (cert $2.pem, key $2.key) into $1.pem with the extensions of
# section $3 in ext.cnf; $4/$5 are the start and end dates (YYYYMMDDHHMMSSZ).
tls_sign() {
    openssl x509 -req -in "$tls_dir/$1.csr" -CA "$tls_dir/$2.pem" -CAkey "$tls_dir/$2.key" \
        -CAcreateserial -CAserial "$tls_dir/$2.srl" -days 3 -sha256 \
        -extfile "$tls_dir/ext.cnf" -extensions "$3" -out "$tls_dir/$1.pem" 2>/dev/null
    rm -f "$tls_dir/$1.csr"
}

tls_key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$tls_dir/$1.key" 2>/dev/null; }
tls_csr() { openssl req -new -key "$tls_dir/$1.key" -subj "/CN=$2" -out "$tls_dir/$1.csr" 2>/dev/null; }
tls_ca() {
    tls_key "$1"
    openssl req -x509 -new -key "$tls_dir/$1.key" -subj "/CN=$2" -days 3 -sha256 \
        -config "$tls_dir/ext.cnf" -extensions ca -out "$tls_dir/$1.pem" 2>/dev/null
}

tls_make_certificates() {
    cat >"$tls_dir/ext.cnf" <<'EOF'
[ req ]
distinguished_name = dn
[ dn ]
[ ca ]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
[ localhost ]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
subjectAltName = DNS:localhost, IP:127.0.0.1
authorityKeyIdentifier = keyid
[ wronghost ]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
subjectAltName = DNS:wrong-host.courier.invalid
authorityKeyIdentifier = keyid
[ client ]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = clientAuth
authorityKeyIdentifier = keyid
[ selfsigned ]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
subjectAltName = DNS:localhost, IP:127.0.0.1
EOF
    tls_ca ca "Courier Test CA"
    tls_ca other-ca "Courier Unknown CA"
    # The valid leaf, its rotated twin (another key pair, same names), wrong host, client.
    for name in leaf rotated wronghost client unknownca expired; do tls_key "$name"; done
    tls_csr leaf localhost && tls_sign leaf ca localhost
    tls_csr rotated localhost && tls_sign rotated ca localhost
    tls_csr wronghost wrong-host.courier.invalid && tls_sign wronghost ca wronghost
    tls_csr client courier-test-client && tls_sign client ca client
    tls_csr unknownca localhost && tls_sign unknownca other-ca localhost
    # Expired: valid for one day a year ago (openssl ca is the 3.0 tool that takes dates).
    mkdir -p "$tls_dir/ca-db"
    : >"$tls_dir/ca-db/index.txt"
    cat >"$tls_dir/ca-db/ca.cnf" <<EOF
[ ca ]
default_ca = test
[ test ]
database = $tls_dir/ca-db/index.txt
new_certs_dir = $tls_dir/ca-db
serial = $tls_dir/ca-db/serial
default_md = sha256
policy = any
unique_subject = no
[ any ]
commonName = supplied
EOF
    openssl rand -hex 8 >"$tls_dir/ca-db/serial"
    local start end
    # (python3 rather than GNU date's -d, which macOS lacks.)
    start=$(python3 -c 'import datetime as d; print((d.datetime.now(d.timezone.utc) - d.timedelta(days=400)).strftime("%Y%m%d%H%M%SZ"))')
    end=$(python3 -c 'import datetime as d; print((d.datetime.now(d.timezone.utc) - d.timedelta(days=399)).strftime("%Y%m%d%H%M%SZ"))')
    tls_csr expired localhost
    openssl ca -batch -notext -config "$tls_dir/ca-db/ca.cnf" -cert "$tls_dir/ca.pem" -keyfile "$tls_dir/ca.key" \
        -startdate "$start" -enddate "$end" -extfile "$tls_dir/ext.cnf" -extensions localhost \
        -in "$tls_dir/expired.csr" -out "$tls_dir/expired.pem" 2>/dev/null
    rm -rf "$tls_dir/ca-db" "$tls_dir/expired.csr"
    # Self-signed leaf for localhost, outside any CA.
    tls_key selfsigned
    openssl req -x509 -new -key "$tls_dir/selfsigned.key" -subj "/CN=localhost" -days 3 -sha256 \
        -config "$tls_dir/ext.cnf" -extensions selfsigned -out "$tls_dir/selfsigned.pem" 2>/dev/null
    # Signing is over: the CAs' private keys go now.
    rm -f "$tls_dir/ca.key" "$tls_dir/other-ca.key" "$tls_dir"/*.srl
    # Chains nginx sends: the leaf alone (the client trusts the root).
    local password
    password=$(openssl rand -hex 12)
    openssl pkcs12 -export -in "$tls_dir/client.pem" -inkey "$tls_dir/client.key" -name courier-test-client \
        -passout "pass:$password" -out "$tls_dir/client.p12" 2>/dev/null
    export COURIER_TLS_CLIENT_P12_PASSWORD="$password"
    local missing=""
    for file in ca leaf rotated wronghost client unknownca expired selfsigned; do
        [ -s "$tls_dir/$file.pem" ] || missing="$missing $file"
    done
    [ -s "$tls_dir/client.p12" ] || missing="$missing client.p12"
    if [ -n "$missing" ]; then
        echo "scripts/test: openssl could not make:$missing" >&2
        return 1
    fi
}

tls_free_ports() {
    python3 -c '
import socket, sys
sockets = [socket.socket() for _ in range(int(sys.argv[1]))]
for s in sockets: s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in sockets))
for s in sockets: s.close()' "$1"
}

# tls_server PORT CERT [extra listen flags] [extra directives]
tls_server_block() {
    cat <<EOF
    server {
        listen 127.0.0.1:$1 ssl$3;
        server_name localhost;
        ssl_certificate $tls_dir/$2.pem;
        ssl_certificate_key $tls_dir/$2.key;
        root $tls_dir/www;
$4
    }
EOF
}

tls_write_config() {
    local httpbin=$1 fault=$2
    local main=$3 fault_port=$4 expired=$5 wronghost=$6 selfsigned=$7 unknownca=$8 mtls=$9 rotated=${10}
    local http1=${11}
    local proxy="
        proxy_http_version 1.1;
        proxy_set_header Connection \"\";
        proxy_buffering off;
        proxy_read_timeout 180s;
        proxy_send_timeout 180s;"
    {
        cat <<EOF
worker_processes 1;
daemon off;
pid $tls_dir/nginx.pid;
error_log $tls_dir/error.log warn;
events { worker_connections 1024; }
http {
    log_format courier '\$connection \$server_protocol \$request';
    access_log $tls_dir/access.log courier;
    default_type application/octet-stream;
    types { application/json json; }
    client_body_temp_path $tls_dir/tmp/body;
    proxy_temp_path $tls_dir/tmp/proxy;
    fastcgi_temp_path $tls_dir/tmp/fastcgi;
    uwsgi_temp_path $tls_dir/tmp/uwsgi;
    scgi_temp_path $tls_dir/tmp/scgi;
    client_max_body_size 0;
    # High enough that no benchmark run retires a connection (an HTTP/2 GOAWAY mid-run).
    keepalive_requests 10000000;
    http2_max_concurrent_streams 128;
    upstream courier_httpbin { server ${httpbin#http://}; keepalive 16; }
    upstream courier_fault { server ${fault#http://}; }
EOF
        tls_server_block "$main" leaf " http2" "
        location / { }
        location /httpbin/ {
            proxy_pass http://courier_httpbin/;
            proxy_set_header Host \$http_host;
            proxy_set_header X-Forwarded-Proto https;
            proxy_redirect ~^/(.*)\$ /httpbin/\$1;$proxy
        }
        # The same httpbin with the request body passed on as it arrives, so httpbin can answer
        # before it has the body (EarlyAnswerUploadTests). Elsewhere nginx reads a body whole first,
        # as it does by default: an upstream that answers early makes nginx close the client's
        # HTTP/1.1 connection after the answer, and a request already on its way to it is lost.
        location /unbuffered/ {
            proxy_pass http://courier_httpbin/;
            proxy_set_header Host \$http_host;
            proxy_set_header X-Forwarded-Proto https;
            proxy_redirect ~^/(.*)\$ /unbuffered/\$1;
            proxy_request_buffering off;$proxy
        }
        location ~ ^/to-http-307(/.*)\$ { return 307 $httpbin\$1\$is_args\$args; }
        location ~ ^/to-http(/.*)\$ { return 302 $httpbin\$1\$is_args\$args; }"
        # The fault server behind TLS, for the checks whose answers are well-formed HTTP (nginx
        # would repair or refuse the malformed ones: those checks talk to the fault server directly).
        tls_server_block "$fault_port" leaf " http2" "
        location / {
            proxy_pass http://courier_fault;
            proxy_set_header Host \$http_host;
            proxy_redirect http://127.0.0.1:${fault##*:}/ https://127.0.0.1:$fault_port/;
            proxy_redirect http://localhost:${fault##*:}/ https://localhost:$fault_port/;$proxy
        }"
        tls_server_block "$expired" expired "" "        location / { }"
        tls_server_block "$wronghost" wronghost "" "        location / { }"
        tls_server_block "$selfsigned" selfsigned "" "        location / { }"
        tls_server_block "$unknownca" unknownca "" "        location / { }"
        tls_server_block "$mtls" leaf " http2" "
        ssl_client_certificate $tls_dir/ca.pem;
        ssl_verify_client on;
        location / { }"
        tls_server_block "$rotated" rotated " http2" "        location / { }"
        tls_server_block "$http1" leaf "" "        location / { }"
        echo "}"
    } >"$tls_dir/nginx.conf"
}

tls_answers() {
    if command -v curl >/dev/null 2>&1; then
        curl -sf -o /dev/null --max-time 1 --cacert "$tls_dir/ca.pem" "$1"
        return
    fi
    python3 -c '
import ssl, sys, urllib.request
context = ssl.create_default_context(cafile=sys.argv[2])
urllib.request.urlopen(sys.argv[1], timeout=1, context=context).read()' "$1" "$tls_dir/ca.pem" 2>/dev/null
}

tls_start() {
    local httpbin=$1 fault=$2
    tls_install_nginx || {
        echo "scripts/test: nginx is missing and could not be installed" >&2
        return 1
    }
    local nginx_bin
    nginx_bin=$(command -v nginx || echo /usr/sbin/nginx)
    tls_dir=$(mktemp -d "${TMPDIR:-/tmp}/courier-tls.XXXXXX")
    mkdir -p "$tls_dir/www" "$tls_dir/tmp"
    # nginx's workers run as an unprivileged user when the master is root: they may pass through
    # the folder (not list it) and read the static files; the keys stay readable by us only.
    chmod 711 "$tls_dir"
    tls_make_certificates || return 1
    printf '{"courier":"small","ok":true}\n' >"$tls_dir/www/small.json"
    head -c 1048576 /dev/urandom >"$tls_dir/www/1m.bin"
    chmod -R a+rX "$tls_dir/www"
    local attempt ports started=""
    for attempt in 1 2 3 4 5; do
        # shellcheck disable=SC2046
        ports=($(tls_free_ports 9))
        tls_write_config "$httpbin" "$fault" "${ports[@]}"
        "$nginx_bin" -p "$tls_dir" -c "$tls_dir/nginx.conf" -e "$tls_dir/error.log" \
            >>"$tls_dir/nginx.out" 2>&1 &
        tls_nginx_pid=$!
        for _ in $(seq 1 100); do
            kill -0 "$tls_nginx_pid" 2>/dev/null || break
            if tls_answers "https://localhost:${ports[0]}/small.json"; then
                started=1
                break 2
            fi
            sleep 0.05
        done
        echo "scripts/test: nginx (TLS) did not start (attempt $attempt):" >&2
        tail -n 5 "$tls_dir/error.log" "$tls_dir/nginx.out" >&2 2>/dev/null || true
        kill "$tls_nginx_pid" 2>/dev/null || true
        wait "$tls_nginx_pid" 2>/dev/null || true
        tls_nginx_pid=""
    done
    [ -n "$started" ] || return 1
    : >"$tls_dir/access.log"
    local spki
    spki=$(openssl x509 -in "$tls_dir/leaf.pem" -pubkey -noout | openssl pkey -pubin -outform DER |
        openssl dgst -sha256 -binary | base64)
    export COURIER_TLS_CA="$tls_dir/ca.pem"
    export COURIER_TLS_URL="https://localhost:${ports[0]}"
    export COURIER_TLS_FAULT_URL="https://127.0.0.1:${ports[1]}"
    export COURIER_TLS_EXPIRED_URL="https://localhost:${ports[2]}"
    export COURIER_TLS_WRONGHOST_URL="https://localhost:${ports[3]}"
    export COURIER_TLS_SELFSIGNED_URL="https://localhost:${ports[4]}"
    export COURIER_TLS_UNKNOWNCA_URL="https://localhost:${ports[5]}"
    export COURIER_TLS_MTLS_URL="https://localhost:${ports[6]}"
    export COURIER_TLS_ROTATED_URL="https://localhost:${ports[7]}"
    export COURIER_TLS_HTTP1_URL="https://localhost:${ports[8]}"
    export COURIER_TLS_ACCESS_LOG="$tls_dir/access.log"
    export COURIER_TLS_CLIENT_CERT="$tls_dir/client.pem"
    export COURIER_TLS_CLIENT_KEY="$tls_dir/client.key"
    export COURIER_TLS_CLIENT_P12="$tls_dir/client.p12"
    export COURIER_TLS_SPKI_SHA256="$spki"
    echo "scripts/test: TLS servers (nginx pid $tls_nginx_pid) on $COURIER_TLS_URL and ports ${ports[*]:1}"
}

# FoundationNetworking on Linux trusts only the system bundle. Runs CMD (after tls_start) in a private
# mount namespace (`unshare --mount`, root) where a bundle of the system's certificates plus the test
# CA is bind-mounted over /etc/ssl/certs/ca-certificates.crt, with COURIER_TLS_SYSTEM_TRUST=test-ca;
# nothing outside the process sees it. Where that is impossible, prints "WHAT: the test CA cannot be
# added to the system bundle (why)" and runs CMD as it is. Returns CMD's status.
tls_run_with_test_ca() {
    local what=$1 bundle=/etc/ssl/certs/ca-certificates.crt why=""
    shift
    if [ "$(uname -s)" != Linux ]; then
        why="not Linux"
    elif [ "$(id -u)" -ne 0 ]; then
        why="not root"
    elif ! [ -f "$bundle" ]; then
        why="no $bundle"
    elif ! unshare --mount true 2>/dev/null; then
        why="unshare --mount is not permitted here"
    fi
    if [ -n "$why" ]; then
        echo "$what: the test CA cannot be added to the system bundle ($why)" >&2
        "$@"
        return
    fi
    cat "$bundle" "$COURIER_TLS_CA" >"$tls_dir/system-bundle.crt"
    chmod 644 "$tls_dir/system-bundle.crt"
    # The caller waits for it as for any command: its traps still stop the servers.
    COURIER_TLS_SYSTEM_TRUST=test-ca unshare --mount --propagation private sh -c \
        'mount --bind "$1" "$2" && shift 2 && exec "$@"' sh "$tls_dir/system-bundle.crt" "$bundle" "$@"
}
