// The browser's Pacerelle cryptography (shared/pacerelle/webapp/static/pcr.js,
// the very file the web app serves) run in node, for the Go interop test
// TestPacerelleWebCryptoInterop: it answers one JSON line per request line.
//
//   {"op":"pair","agentList":LIST}  -> {"device","list","code","fingerprint","confirm","envelope"}
//   {"op":"open","envelope":B64}     -> {"body"} (or {"error"})
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";

const pcr = await import(pathToFileURL(process.argv[2]).href);
let me, pins = {}, seen = new Set();
const rl = createInterface({ input: process.stdin });
for await (const line of rl) {
  const req = JSON.parse(line);
  try {
    if (req.op === "pair") {
      me = await pcr.newIdentity("person:bob", "web-1");
      const list = await pcr.signList(me, 1, [me.device]);
      const agent = req.agentList.devices[0];
      await pcr.verifyList(req.agentList, req.agentList);
      pins[req.agentList.party] = req.agentList;
      const confirm = pcr.b64(await pcr.sign(me, "pairing", pcr.transcript(agent, me.device)));
      const env = await pcr.seal(me, { to: [req.agentList.party], conversation: "c1", messageId: "m1", listVersion: 1, sentAtMs: Date.now() },
        [agent], new TextEncoder().encode(req.body));
      console.log(JSON.stringify({ device: me.device, list, code: await pcr.pairingCode(agent, me.device), fingerprint: await pcr.fingerprint(agent),
        confirm, envelope: pcr.b64(pcr.encodeEnvelope(env)) }));
    } else if (req.op === "open") {
      const body = await pcr.open(me, pins, seen, pcr.decodeEnvelope(pcr.unb64(req.envelope)));
      console.log(JSON.stringify({ body: new TextDecoder().decode(body) }));
    }
  } catch (e) {
    console.log(JSON.stringify({ error: String(e?.stack ?? e) }));
  }
}
