// use.ts -- compiled (never run) by test_js.sh with tsc --noEmit: agentlink/js's
// index.d.ts must type-check as deepagents 1.14's BackendProtocolV2 and as a
// CompositeBackend route, and refuse an unknown option.
import { CompositeBackend, StateBackend, createDeepAgent, type BackendProtocolV2 } from "deepagents";
import { OffloadBackend, type OffloadBackendOptions } from "../../../agentlink/js/index.js";
import DefaultBackend from "../../../agentlink/js/index.js";

const options: OffloadBackendOptions = { store: "/s", namespace: "n", mount: "/m", agentlink: "/bin/agentlink" };
const backend: BackendProtocolV2 = new OffloadBackend(options);
const composite = new CompositeBackend(new StateBackend(), { "/large_tool_results/": new DefaultBackend() });
createDeepAgent({ backend: composite });

async function use(b: OffloadBackend): Promise<string[]> {
  const read = await b.read("/call_1.txt", 0, 100);
  const text: string | Uint8Array | undefined = read.content;
  const written = await b.write("/call_1.txt", "x");
  const edited = await b.edit("/call_1.txt", "a", "b");
  const found = await b.grep("x", "/", null, 10);
  const listed = await b.ls("/");
  const globbed = await b.glob("*.txt");
  const raw = await b.readRaw("/call_1.txt");
  const up = await b.uploadFiles([["/a", new Uint8Array(1)]]);
  const down = await b.downloadFiles(["/a"]);
  return [String(text), written.error ?? "", edited.error ?? "", String(found.matches?.length),
    String(listed.files?.length), String(globbed.files?.length), String(raw.data?.mimeType),
    String(up[0].error), String(down[0].content?.length), b.store, b.namespace, b.mount, b.agentlink];
}
use(new OffloadBackend());
void backend;

// @ts-expect-error: not an option
new OffloadBackend({ stor: "/s" });
// @ts-expect-error: options are strings
new OffloadBackend({ mount: 1 });
