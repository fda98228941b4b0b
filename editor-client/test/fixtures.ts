// Payloads shaped like the real server's (server/redline/lsp/sidebar.py, jobs.py).
import { Finding, FindingsPayload } from '../src/protocol';

export const FOLDER = 'file:///work/demo';

export function finding(over: Partial<Finding> & { id: string }): Finding {
  return {
    file: 'app/users.py',
    line: 10,
    end_line: 10,
    severity: 'Medium',
    category: 'bug',
    title: 'A finding',
    comment: 'Why it matters.',
    existing_code: 'x = 1',
    improved_code: null,
    confidence: 0.8,
    sources: ['model:gpt-4o-mini'],
    rule_id: null,
    verification: null,
    stale: false,
    ...over,
  };
}

export function payload(): FindingsPayload {
  return {
    folder: FOLDER,
    taskId: 'abc123def456',
    scopeLabel: 'branch feature against main',
    files: [
      {
        uri: `${FOLDER}/app/users.py`,
        path: 'app/users.py',
        findings: [
          finding({ id: 'RL-1', line: 42, end_line: 44, severity: 'High', title: 'SQL built from user input', improved_code: 'cur.execute(q, (name,))' }),
          finding({ id: 'RL-2', line: 7, severity: 'Low', title: 'Mutable default argument', sources: ['ruff:B006'], rule_id: 'B006' }),
          finding({ id: 'RL-3', line: null, end_line: null, severity: 'Critical', title: 'Secret in the code', unanchored: true, improved_code: 'KEY = os.environ["KEY"]' }),
        ],
      },
      {
        uri: `${FOLDER}/app/api.py`,
        path: 'app/api.py',
        findings: [
          finding({ id: 'RL-4', file: 'app/api.py', line: 3, severity: 'Medium', title: 'Timeout missing', stale: true, improved_code: 'requests.get(u, timeout=5)', sources: ['model:x', 'bandit:B113'] }),
        ],
      },
    ],
  };
}
