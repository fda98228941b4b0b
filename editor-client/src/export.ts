// Export Report…: a format, a file, then `redline.export {format, path}` (the server writes it).
import * as vscode from 'vscode';
import { RedlineClient } from './client';
import { EXPORT_CHOICES, exportFileName } from './args';

export async function exportReport(client: RedlineClient, folder: string | undefined): Promise<void> {
  const choice = await vscode.window.showQuickPick(
    EXPORT_CHOICES.map((c) => ({ label: c.label, choice: c })),
    { title: 'Export Report…', placeHolder: 'Format' },
  );
  if (!choice) return;
  const dir = folder ? vscode.Uri.parse(folder) : vscode.workspace.workspaceFolders?.[0]?.uri;
  const target = await vscode.window.showSaveDialog({
    title: 'Export Redline Report',
    defaultUri: dir ? vscode.Uri.joinPath(dir, exportFileName(choice.choice)) : undefined,
    filters: { [choice.choice.label]: [choice.choice.extension] },
  });
  if (!target) return;
  const args: Record<string, string> = { format: choice.choice.format, path: target.fsPath };
  if (folder) args.folder = folder;
  const result = await client.command<{ path?: string; findings?: number }>('redline.export', args);
  if (!result) return;
  const open = await vscode.window.showInformationMessage(
    `Redline: report saved to ${result.path ?? target.fsPath}`, 'Open');
  if (open) await vscode.window.showTextDocument(vscode.Uri.file(result.path ?? target.fsPath));
}
