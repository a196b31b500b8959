// The only npm code the web app ships: HPKE (RFC 9180) with the X-Wing KEM
// (ML-KEM-768 + X25519, KEM id 0x647a), HKDF-SHA256 and AES-256-GCM, the
// suite of shared/pacerelle/seal. Bundled by scripts/pacerelle-bundle.sh.
export { Aes256Gcm, CipherSuite, HkdfSha256 } from "@hpke/core";
export { XWing } from "@hpke/hybridkem-x-wing";
