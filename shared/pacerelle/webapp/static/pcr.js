// Pacerelle in the browser: the byte formats and the cryptography of
// shared/pacerelle/seal (envelopes, device lists, pairing v2), on
// WebCrypto (Ed25519, AES-256-GCM, SHA-256) and HPKE X-Wing from the
// bundled @hpke packages. Keep in step with seal/codec.go, seal/seal.go
// seal/pins.go and seal/sas.go: the interop test (tests/pacerelle_web_test.go) seals
// on one side and opens on the other.
import { Aes256Gcm, CipherSuite, HkdfSha256, XWing } from "./hpke.bundle.js";

export const SUITE_HPKE = 1;
const te = new TextEncoder();
const td = new TextDecoder("utf-8", { fatal: true });
const subtle = globalThis.crypto.subtle;
const kem = new XWing();
const suite = new CipherSuite({ kem, kdf: new HkdfSha256(), aead: new Aes256Gcm() });

export function b64(u8) {
  let s = "";
  for (const c of u8) s += String.fromCharCode(c);
  return btoa(s);
}

export function unb64(s) {
  const bin = atob(s);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

function concat(...parts) {
  const n = parts.reduce((a, p) => a + p.length, 0);
  const out = new Uint8Array(n);
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

class Writer {
  constructor() { this.parts = []; }
  raw(u8) { this.parts.push(u8); }
  u16(n) { this.parts.push(new Uint8Array([(n >> 8) & 255, n & 255])); }
  u32(n) { const b = new Uint8Array(4); new DataView(b.buffer).setUint32(0, n); this.parts.push(b); }
  u64(n) { const b = new Uint8Array(8); new DataView(b.buffer).setBigUint64(0, BigInt(n)); this.parts.push(b); }
  str(s) { const b = te.encode(s); this.u16(b.length); this.parts.push(b); }
  bytes(u8) { this.u32(u8.length); this.parts.push(u8); }
  done() { return concat(...this.parts); }
}

class Reader {
  constructor(u8) { this.b = u8; this.o = 0; }
  take(n) {
    if (this.o + n > this.b.length) throw new Error("malformed envelope");
    const p = this.b.subarray(this.o, this.o + n);
    this.o += n;
    return p;
  }
  u16() { const p = this.take(2); return (p[0] << 8) | p[1]; }
  u32() { const p = this.take(4); return new DataView(p.buffer, p.byteOffset, 4).getUint32(0); }
  u64() { const p = this.take(8); return Number(new DataView(p.buffer, p.byteOffset, 8).getBigUint64(0)); }
  str() { return td.decode(this.take(this.u16())); }
  bytes() { return this.take(this.u32()).slice(); }
}

const MAGIC = te.encode("PCR1");
// seal/codec.go's limits.
const MAX_RECIPIENTS = 16;
const MAX_WRAPS = 32;

export function encodeHeader(h) {
  const w = new Writer();
  w.raw(MAGIC);
  w.raw(new Uint8Array([h.suite]));
  w.str(h.fromParty);
  w.str(h.fromDevice);
  w.u16(h.to.length);
  for (const p of h.to) w.str(p);
  w.str(h.conversation);
  w.str(h.messageId);
  w.u64(h.listVersion);
  w.u64(h.sentAtMs);
  return w.done();
}

function signedBytes(env) {
  const w = new Writer();
  w.raw(encodeHeader(env));
  w.u16(env.wraps.length);
  for (const k of env.wraps) {
    w.str(k.device);
    w.bytes(k.enc);
  }
  w.bytes(env.nonce);
  w.bytes(env.ciphertext);
  return w.done();
}

export function encodeEnvelope(env) {
  const w = new Writer();
  w.raw(signedBytes(env));
  w.bytes(env.sig);
  return w.done();
}

export function decodeEnvelope(u8) {
  if (u8.length < 5 || td.decode(u8.subarray(0, 4)) !== "PCR1") throw new Error("malformed envelope");
  const r = new Reader(u8);
  r.take(4);
  const env = { suite: r.take(1)[0] };
  env.fromParty = r.str();
  env.fromDevice = r.str();
  env.to = [];
  const nTo = r.u16();
  if (nTo < 1 || nTo > MAX_RECIPIENTS) throw new Error("malformed envelope");
  for (let n = nTo; n > 0; n--) env.to.push(r.str());
  env.conversation = r.str();
  env.messageId = r.str();
  env.listVersion = r.u64();
  env.sentAtMs = r.u64();
  env.wraps = [];
  const nWraps = r.u16();
  if (nWraps < 1 || nWraps > MAX_WRAPS) throw new Error("malformed envelope");
  for (let n = nWraps; n > 0; n--) env.wraps.push({ device: r.str(), enc: r.bytes() });
  env.nonce = r.bytes();
  env.ciphertext = r.bytes();
  env.sig = r.bytes();
  if (r.o !== u8.length || (env.suite === SUITE_HPKE && env.nonce.length !== 12)) throw new Error("malformed envelope");
  return env;
}

function labelled(label, msg) {
  return concat(te.encode("pacerelle/v1 " + label + "\0"), msg);
}

async function sha256(u8) {
  return new Uint8Array(await subtle.digest("SHA-256", u8));
}

async function wrapInfo(header, device) {
  return concat(te.encode("pacerelle/v1 wrap\0"), await sha256(header), te.encode(device));
}

function encodeDevice(w, d) {
  w.str(d.party);
  w.str(d.id);
  w.bytes(unb64(d.signKey));
  w.bytes(unb64(d.kemKey));
}

function deviceBytes(d) {
  const w = new Writer();
  encodeDevice(w, d);
  return w.done();
}

function listBytes(l) {
  const w = new Writer();
  w.str(l.party);
  w.u64(l.version);
  w.u16(l.devices.length);
  for (const d of l.devices) encodeDevice(w, d);
  w.str(l.signer);
  return w.done();
}

// Pairing v2 (seal/sas.go): the device commits to its keys and a fresh
// nonce, the agent answers with its own nonce, the device reveals; the
// code covers both keys and both nonces, so a relay in the middle cannot
// grind keys until both screens agree.
export const PAIRING_VERSION = 2;
export const NONCE_SIZE = 32;
export const ANSWER_LABEL = "pairing/v2 answer";
export const CONFIRM_LABEL = "pairing/v2 confirm";

export function newPairingNonce() {
  return globalThis.crypto.getRandomValues(new Uint8Array(NONCE_SIZE));
}

// commitment is seal.Commitment.
export async function commitment(d, nonce) {
  const w = new Writer();
  w.raw(te.encode("pacerelle/v2 sas commit\0"));
  encodeDevice(w, d);
  w.bytes(nonce);
  return sha256(w.done());
}

// pairingTranscript is seal.PairingTranscript: the committer (this
// device) and its nonce, then the responder (the agent) and its nonce.
export function pairingTranscript(committer, cNonce, responder, rNonce) {
  if (cNonce.length !== NONCE_SIZE || rNonce.length !== NONCE_SIZE) throw new Error("a pairing nonce is not " + NONCE_SIZE + " bytes");
  const w = new Writer();
  w.u16(PAIRING_VERSION);
  encodeDevice(w, committer);
  w.bytes(cNonce);
  encodeDevice(w, responder);
  w.bytes(rNonce);
  return w.done();
}

// pairingCode is seal.PairingCode: six digits both screens show.
export async function pairingCode(committer, cNonce, responder, rNonce) {
  const sum = await sha256(concat(te.encode("pacerelle/v2 sas\0"), pairingTranscript(committer, cNonce, responder, rNonce)));
  const n = new DataView(sum.buffer).getBigUint64(0) % 1000000n;
  return String(n).padStart(6, "0");
}

function answerBytes(commit, rNonce) {
  const w = new Writer();
  w.u16(PAIRING_VERSION);
  w.bytes(commit);
  w.bytes(rNonce);
  return w.done();
}

// checkAnswer is seal.CheckAnswer: the agent's nonce, signed by its device
// for this very commitment (an answer replayed from another pairing fails).
export async function checkAnswer(responder, commit, rNonce, sig) {
  if (rNonce.length !== NONCE_SIZE) throw new Error("the agent's answer nonce is not " + NONCE_SIZE + " bytes");
  if (!(await verify(responder, ANSWER_LABEL, answerBytes(commit, rNonce), sig))) {
    throw new Error("the agent's answer is not signed by its device for this commitment");
  }
}

// fingerprint is seal.Fingerprint.
export async function fingerprint(d) {
  const sum = await sha256(deviceBytes(d));
  return Array.from(sum.subarray(0, 8), (c) => c.toString(16).padStart(2, "0")).join("");
}

// An identity is { device, signKey (a non-extractable Ed25519 CryptoKey),
// kemSeed (the 32-byte X-Wing secret) }; the device has the seal.Device
// JSON shape (keys in base64).
export async function newIdentity(party, id) {
  const sk = await subtle.generateKey({ name: "Ed25519" }, false, ["sign", "verify"]);
  const seed = globalThis.crypto.getRandomValues(new Uint8Array(32));
  return identityFrom(party, id, sk, seed);
}

export async function identityFrom(party, id, signPair, kemSeed) {
  const kp = await kem.generateKeyPairDerand(kemSeed);
  const kemPub = new Uint8Array(await kem.serializePublicKey(kp.publicKey));
  const signPub = new Uint8Array(await subtle.exportKey("raw", signPair.publicKey));
  return {
    device: { id, party, signKey: b64(signPub), kemKey: b64(kemPub) },
    signPair,
    kemSeed,
    kemPriv: kp.privateKey,
  };
}

export async function sign(me, label, msg) {
  return new Uint8Array(await subtle.sign("Ed25519", me.signPair.privateKey, labelled(label, msg)));
}

export async function verify(device, label, msg, sig) {
  const k = await subtle.importKey("raw", unb64(device.signKey), "Ed25519", false, ["verify"]);
  return subtle.verify("Ed25519", k, sig, labelled(label, msg));
}

// signList is seal.SignList.
export async function signList(me, version, devices) {
  const l = { party: me.device.party, version, devices, signer: me.device.id };
  l.sig = b64(await sign(me, "device-list", listBytes(l)));
  return l;
}

// verifyList checks l is signed by a device of by (l itself on first pin).
export async function verifyList(l, by) {
  const signer = by.devices.find((d) => d.id === l.signer);
  if (!signer || !(await verify(signer, "device-list", listBytes(l), unb64(l.sig)))) throw new Error("device list signature");
  for (const d of l.devices) if (d.party !== l.party) throw new Error("device list party");
}

// seal is seal.Seal with SuiteHPKE.
export async function seal(me, h, recipients, body) {
  const env = { ...h, suite: SUITE_HPKE, fromParty: me.device.party, fromDevice: me.device.id };
  const hb = encodeHeader(env);
  const key = globalThis.crypto.getRandomValues(new Uint8Array(32));
  env.nonce = globalThis.crypto.getRandomValues(new Uint8Array(12));
  const ck = await subtle.importKey("raw", key, "AES-GCM", false, ["encrypt"]);
  env.ciphertext = new Uint8Array(await subtle.encrypt({ name: "AES-GCM", iv: env.nonce, additionalData: hb }, ck, body));
  env.wraps = [];
  for (const d of recipients) {
    const pk = await kem.deserializePublicKey(unb64(d.kemKey));
    const r = await suite.seal({ recipientPublicKey: pk, info: await wrapInfo(hb, d.id) }, key);
    env.wraps.push({ device: d.id, enc: concat(new Uint8Array(r.enc), new Uint8Array(r.ct)) });
  }
  env.sig = await sign(me, "envelope", signedBytes(env));
  return env;
}

// open is seal.Open: the sender must be in its party's pinned list (pins:
// party -> list), the signature must hold, the id must be new (seen:
// a Set of "conversation\0id"); it returns the body.
export async function open(me, pins, seen, env) {
  const list = pins[env.fromParty];
  if (!list) throw new Error("sender is not pinned");
  if (env.listVersion > list.version) throw new Error("sender device list is newer than the pinned one");
  const sender = list.devices.find((d) => d.id === env.fromDevice);
  if (!sender) throw new Error("sender device is not pinned");
  if (!(await verify(sender, "envelope", signedBytes(env), env.sig))) throw new Error("bad signature");
  const seenKey = env.conversation + "\0" + env.messageId;
  if (seen.has(seenKey)) throw new Error("replay");
  const mine = env.wraps.find((w) => w.device === me.device.id);
  if (!mine || !env.to.includes(me.device.party)) throw new Error("not addressed to this device");
  if (env.suite !== SUITE_HPKE) throw new Error("envelope is not encrypted");
  const hb = encodeHeader(env);
  const enc = mine.enc.subarray(0, kem.encSize), ct = mine.enc.subarray(kem.encSize);
  const key = new Uint8Array(await suite.open({ recipientKey: me.kemPriv, enc, info: await wrapInfo(hb, me.device.id) }, ct));
  const ck = await subtle.importKey("raw", key, "AES-GCM", false, ["decrypt"]);
  const body = new Uint8Array(await subtle.decrypt({ name: "AES-GCM", iv: env.nonce, additionalData: hb }, ck, env.ciphertext));
  seen.add(seenKey);
  return body;
}
