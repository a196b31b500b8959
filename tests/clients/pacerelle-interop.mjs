// The browser's Pacerelle cryptography (shared/pacerelle/webapp/static/pcr.js,
// the very file the web app serves) run in node, for the Go interop test
// TestPacerelleWebCryptoInterop: it answers one JSON line per request line.
//
//   {"op":"pair","agentList":LIST}                 -> {"device","list","commit"}          (pairing v2: the device commits)
//   {"op":"answer","nonce":B64,"sig":B64,"body":S} -> {"nonce","code","fingerprint","confirm","envelope"} (or {"error"})
//   {"op":"open","envelope":B64}                    -> {"body"} (or {"error"})
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";

const pcr = await import(pathToFileURL(process.argv[2]).href);
let me, agentList, nonce, commit, pins = {}, seen = new Set();
const rl = createInterface({ input: process.stdin });
for await (const line of rl) {
  const req = JSON.parse(line);
  try {
    if (req.op === "pair") {
      me = await pcr.newIdentity("person:bob", "web-1");
      const list = await pcr.signList(me, 1, [me.device]);
      await pcr.verifyList(req.agentList, req.agentList);
      agentList = req.agentList;
      nonce = pcr.newPairingNonce();
      commit = await pcr.commitment(me.device, nonce);
      console.log(JSON.stringify({ device: me.device, list, commit: pcr.b64(commit) }));
    } else if (req.op === "answer") {
      const agent = agentList.devices[0];
      const agentNonce = pcr.unb64(req.nonce);
      await pcr.checkAnswer(agent, commit, agentNonce, pcr.unb64(req.sig));
      pins[agentList.party] = agentList;
      const confirm = pcr.b64(await pcr.sign(me, pcr.CONFIRM_LABEL, pcr.pairingTranscript(me.device, nonce, agent, agentNonce)));
      const env = await pcr.seal(me, { to: [agentList.party], conversation: "c1", messageId: "m1", listVersion: 1, sentAtMs: Date.now() },
        [agent], new TextEncoder().encode(req.body));
      console.log(JSON.stringify({ nonce: pcr.b64(nonce), code: await pcr.pairingCode(me.device, nonce, agent, agentNonce),
        fingerprint: await pcr.fingerprint(agent), confirm, envelope: pcr.b64(pcr.encodeEnvelope(env)) }));
    } else if (req.op === "open") {
      const body = await pcr.open(me, pins, seen, pcr.decodeEnvelope(pcr.unb64(req.envelope)));
      console.log(JSON.stringify({ body: new TextDecoder().decode(body) }));
    }
  } catch (e) {
    console.log(JSON.stringify({ error: String(e?.stack ?? e) }));
  }
}
