// Starts `prose lsp` for *.prose.md files and connects VS Code to it over stdio.
"use strict";

const vscode = require("vscode");
const { LanguageClient, TransportKind } = require("vscode-languageclient/node");

let client;

function activate(context) {
  const settings = vscode.workspace.getConfiguration("prose");
  const [command, ...args] = settings.get("server.command", ["prose", "lsp"]);
  const server = { command, args, transport: TransportKind.stdio };
  client = new LanguageClient(
    "prose",
    "prose",
    { run: server, debug: server },
    {
      documentSelector: [{ scheme: "file", language: "markdown", pattern: "**/*.prose.md" }],
      initializationOptions: {
        quickDelay: settings.get("diagnostics.quickDelay", 0.05),
        completeDelay: settings.get("diagnostics.completeDelay", 0.4),
      },
    },
  );
  context.subscriptions.push({ dispose: () => client && client.stop() });
  return client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
