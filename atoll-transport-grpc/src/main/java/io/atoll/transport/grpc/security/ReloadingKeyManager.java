package io.atoll.transport.grpc.security;

import java.net.Socket;
import java.security.Principal;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.X509ExtendedKeyManager;

/** Presents the newest certificate and key of a {@link TlsMaterial} at every handshake. */
final class ReloadingKeyManager extends X509ExtendedKeyManager {

  private final TlsMaterial material;

  ReloadingKeyManager(TlsMaterial material) {
    this.material = material;
  }

  private X509ExtendedKeyManager km() {
    return material.current().keys();
  }

  @Override
  public String[] getClientAliases(String keyType, Principal[] issuers) {
    return km().getClientAliases(keyType, issuers);
  }

  @Override
  public String chooseClientAlias(String[] keyType, Principal[] issuers, Socket socket) {
    return km().chooseClientAlias(keyType, issuers, socket);
  }

  @Override
  public String[] getServerAliases(String keyType, Principal[] issuers) {
    return km().getServerAliases(keyType, issuers);
  }

  @Override
  public String chooseServerAlias(String keyType, Principal[] issuers, Socket socket) {
    return km().chooseServerAlias(keyType, issuers, socket);
  }

  @Override
  public X509Certificate[] getCertificateChain(String alias) {
    return km().getCertificateChain(alias);
  }

  @Override
  public PrivateKey getPrivateKey(String alias) {
    return km().getPrivateKey(alias);
  }

  @Override
  public String chooseEngineClientAlias(String[] keyType, Principal[] issuers, SSLEngine engine) {
    return km().chooseEngineClientAlias(keyType, issuers, engine);
  }

  @Override
  public String chooseEngineServerAlias(String keyType, Principal[] issuers, SSLEngine engine) {
    return km().chooseEngineServerAlias(keyType, issuers, engine);
  }
}
