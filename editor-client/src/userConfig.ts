// Open User Configuration: the model, API base and keys live in the user's own Redline config
// file, never in VS Code settings (a workspace's settings are written by the repository's author).
import * as vscode from 'vscode';
import { RedlineClient } from './client';
import { REQUESTS, UserConfigResult } from './protocol';

export async function openUserConfig(client: RedlineClient): Promise<void> {
  const result = await client.request<UserConfigResult>(REQUESTS.userConfig, { create: true });
  if (!result) return;
  await vscode.window.showTextDocument(vscode.Uri.file(result.path));
  if (result.created) {
    void vscode.window.showInformationMessage(`Redline: created ${result.path} — set your model and key there.`);
  }
}
