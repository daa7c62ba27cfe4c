/**
 * The cost of TLS on the server's side without a network: the JDK's and OpenSSL's engines under
 * Netty's SslHandler, compared in one thread (bench/tls-providers.sh).
 */
@NullMarked
package io.fieldline.perf.tls;

import org.jspecify.annotations.NullMarked;
