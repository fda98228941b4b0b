;;; drive.el --- Emacs in batch as a user of the README's Redline snippet  -*- lexical-binding: t; -*-
;;
;; Driven by tests/test_emacs.py, which extracts the snippet from README.md (so the README cannot
;; drift) and runs, with `redline' on PATH:
;;
;;   REDLINE_EMACS_SNIPPET=<snippet.el> REDLINE_EMACS_REPO=<demo repo>
;;   REDLINE_EMACS_OUT=<result.json> emacs --batch -l tests/emacs/drive.el
;;
;; Loads the snippet before eglot (as an init file does), opens app/reports.py, runs `M-x eglot'
;; and `M-x redline-review-branch', waits for Flymake's diagnostics and writes what it saw as
;; JSON.

(require 'json)

(defvar redline-test-result nil "What the session saw, written as JSON at the end.")
(defconst redline-test-timeout
  (string-to-number (or (getenv "REDLINE_EMACS_TIMEOUT") "40"))
  "Seconds to wait for each step.")

(defun redline-test-put (key value)
  (setq redline-test-result (plist-put redline-test-result key value)))

(defun redline-test-wait (what predicate)
  "Wait for PREDICATE, running the command loop's hooks as an interactive Emacs would.
Batch Emacs has no command loop: Flymake starts its backends from `post-command-hook'."
  (redline-test-put :step (concat "waiting for " what))
  (let ((deadline (+ (float-time) redline-test-timeout)))
    (while (and (not (funcall predicate)) (< (float-time) deadline))
      (run-hooks 'post-command-hook)
      (accept-process-output nil 0.05))
    (unless (funcall predicate)
      (error "Timed out after %s s waiting for %s" redline-test-timeout what))))

(defun redline-test-diagnostics ()
  ;; A vector: `json-encode' would take a list of plists for one object.
  (vconcat
   (mapcar (lambda (d)
             (list :line (line-number-at-pos (flymake-diagnostic-beg d))
                   :type (symbol-name (flymake-diagnostic-type d))
                   :text (flymake-diagnostic-text d)))
           (sort (flymake-diagnostics)
                 (lambda (a b) (< (flymake-diagnostic-beg a) (flymake-diagnostic-beg b)))))))

(defun redline-test-run ()
  ;; What an interactive start-up does before the init file (batch mode skips it): installed
  ;; packages' autoloads, so that `M-x eglot' loads eglot (Debian's elpa-eglot is a package).
  (package-activate-all)
  (redline-test-put :step "load the snippet")
  ;; Before eglot is loaded, as in an init file: the snippet must not need it yet.
  (redline-test-put :eglot-loaded-before (if (featurep 'eglot) t :json-false))
  (load (getenv "REDLINE_EMACS_SNIPPET") nil t)
  (redline-test-put :emacs emacs-version)
  (redline-test-put :commands
                    (list (commandp 'redline-review-branch) (commandp 'redline-review-uncommitted)))
  (redline-test-put :step "open")
  (find-file (expand-file-name "app/reports.py" (getenv "REDLINE_EMACS_REPO")))
  (redline-test-put :mode (symbol-name major-mode))
  (redline-test-put :step "M-x eglot")
  (call-interactively #'eglot)
  (redline-test-wait "eglot to connect" (lambda () (eglot-current-server)))
  (let ((server (eglot-current-server)))
    (redline-test-put :server-command (process-command (jsonrpc--process server)))
    (redline-test-put :step "M-x redline-review-branch")
    (redline-test-put :review (call-interactively #'redline-review-branch))
    (redline-test-wait "4 Flymake diagnostics" (lambda () (>= (length (flymake-diagnostics)) 4)))
    ;; Anything more would arrive with the same batch; give it a moment before reading.
    (accept-process-output nil 0.5)
    (redline-test-put :diagnostics (redline-test-diagnostics))
    (redline-test-put :step "shutdown")
    (eglot-shutdown server)
    (redline-test-put :server-running (if (jsonrpc-running-p server) t :json-false)))
  (redline-test-put :step "done"))

(condition-case err
    (progn (redline-test-run) (redline-test-put :ok t))
  (error (redline-test-put :ok :json-false)
         (redline-test-put :error (error-message-string err))))
(with-temp-file (getenv "REDLINE_EMACS_OUT")
  (insert (json-encode redline-test-result)))
(kill-emacs 0)
