// agentrun.mjs -- one deepagents agent run for tests: createDeepAgent with
// the scripted chat model (scripted.mjs) over a CompositeBackend whose
// /large_tool_results/ route is the backend under test, so a test sees
// exactly what deepagents' own tools (ls, glob, grep, read_file) gave the
// model. Used by agent.test.mjs and tests/remote/js_list.mjs.
import { CompositeBackend, StateBackend, createDeepAgent } from "deepagents";
import { HumanMessage } from "@langchain/core/messages";
import { ScriptedChatModel } from "./scripted.mjs";

/** Runs one agent over BACKEND with TOOLS and the scripted TURNS; returns { model, state }. */
export async function runAgent(backend, tools, turns) {
  const model = new ScriptedChatModel(turns);
  const agent = createDeepAgent({
    model,
    tools,
    backend: new CompositeBackend(new StateBackend(), { "/large_tool_results/": backend }),
  });
  const state = await agent.invoke({ messages: [new HumanMessage("run the tools")] });
  return { model, state };
}
