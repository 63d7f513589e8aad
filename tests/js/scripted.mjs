// scripted.mjs -- a chat model for tests: no network, no LLM. It answers
// each call with the next turn of a fixed script (tool calls, then a final
// text) and records every message list it was given, so a test can check
// exactly what deepagents put in front of the model.
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage } from "@langchain/core/messages";

export class ScriptedChatModel extends BaseChatModel {
  /**
   * @param {Array<{toolCalls?: Array<{name: string, args: object, id: string}>, text?: string}>} turns
   */
  constructor(turns) {
    super({});
    this.turns = turns;
    this.calls = []; // one entry per model call: the messages it received
    this.boundTools = [];
  }

  _llmType() {
    return "scripted";
  }

  bindTools(tools) {
    this.boundTools = tools.map((t) => t.name ?? t.function?.name);
    return this;
  }

  async _generate(messages) {
    this.calls.push(messages.map((m) => ({
      type: m._getType(),
      content: typeof m.content === "string" ? m.content
        : m.content.map((b) => (b.type === "text" ? b.text : JSON.stringify(b))).join("\n"),
      name: m.name,
      tool_call_id: m.tool_call_id,
      status: m.status,
    })));
    const turn = this.turns[this.calls.length - 1] ?? { text: "(script exhausted)" };
    const message = new AIMessage({
      content: turn.text ?? "",
      tool_calls: (turn.toolCalls ?? []).map((c) => ({ ...c, type: "tool_call" })),
    });
    return { generations: [{ text: turn.text ?? "", message }] };
  }

  /** The ToolMessage answering tool call ID, as the model saw it (latest call first). */
  toolResult(id) {
    for (let i = this.calls.length - 1; i >= 0; i--) {
      const m = this.calls[i].find((x) => x.type === "tool" && x.tool_call_id === id);
      if (m) return m;
    }
    return undefined;
  }
}
