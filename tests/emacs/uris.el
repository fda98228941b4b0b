;;; uris.el --- Emacs + eglot in a repository under café/c++proj  -*- lexical-binding: t; -*-
;;
;; eglot spells its URIs `caf%C3%A9/c++proj' (`+' unencoded), the server `c%2B%2Bproj'. Driven by
;; tests/test_emacs_uris.py, with `redline' on PATH:
;;
;;   REDLINE_EMACS_SNIPPET=<snippet.el> REDLINE_EMACS_REPO=<repo>
;;   REDLINE_EMACS_OUT=<result.json> emacs --batch -l tests/emacs/uris.el
;;
;; Loads the README's snippet, opens app/reports.py, runs `M-x eglot' and the snippet's
;; `redline-review-branch', asks for the code actions at the unused import and applies the fix,
;; adds a first line to the buffer (unsaved), reviews again, then changes app/extra.py on disk (as
;; a pull would) and opens it. Each step records where Flymake shows the findings and goes on
;; even when they did not move: the test asserts on all of them.

(require 'json)
(require 'cl-lib)

(defvar redline-test-result nil "What the session saw, written as JSON at the end.")
(defvar redline-test-finished nil "Task ids of the reviews that ended, with their state.")
(defconst redline-test-timeout 40 "Seconds to wait for a review.")
(defconst redline-test-settle 5 "Seconds to wait for a squiggle that should move.")

(defun redline-test-put (key value)
  (setq redline-test-result (plist-put redline-test-result key value)))

(defun redline-test-until (seconds predicate)
  "Run the command loop's hooks (Flymake starts its backends from `post-command-hook') until
PREDICATE holds or SECONDS pass; whether it holds."
  (let ((deadline (+ (float-time) seconds)))
    (while (and (not (funcall predicate)) (< (float-time) deadline))
      (run-hooks 'post-command-hook)
      (accept-process-output nil 0.05))
    (funcall predicate)))

(defun redline-test-wait (what predicate)
  (redline-test-put :step (concat "waiting for " what))
  (unless (redline-test-until redline-test-timeout predicate)
    (error "Timed out after %s s waiting for %s" redline-test-timeout what)))

(defun redline-test-lines ()
  "The 1-based lines of this buffer's Flymake diagnostics, as a vector."
  (vconcat (sort (mapcar (lambda (d) (line-number-at-pos (flymake-diagnostic-beg d)))
                         (flymake-diagnostics))
                 #'<)))

(defun redline-test-send-changes ()
  "What eglot's idle timer does half a second after an edit (batch Emacs is never idle)."
  (eglot--signal-textDocument/didChange))

(defun redline-test-settle (want)
  (redline-test-until redline-test-settle (lambda () (equal (redline-test-lines) want)))
  (redline-test-lines))

(defun redline-test-review ()
  "The snippet's `redline-review-branch', waited for until the review ends."
  (let ((task (plist-get (call-interactively #'redline-review-branch) :taskId)))
    (redline-test-wait "the review to end" (lambda () (assoc task redline-test-finished)))
    (cdr (assoc task redline-test-finished))))

(defun redline-test-run ()
  (package-activate-all)
  (load (getenv "REDLINE_EMACS_SNIPPET") nil t)
  (require 'eglot)
  (cl-defmethod eglot-handle-notification
    (_server (_method (eql redline/reviewState)) &key taskId state &allow-other-keys)
    (when (member state '("finished" "failed" "cancelled"))
      (push (cons taskId state) redline-test-finished)))
  (let ((repo (getenv "REDLINE_EMACS_REPO")))
    (redline-test-put :step "open")
    (find-file (expand-file-name "app/reports.py" repo))
    (call-interactively #'eglot)
    (redline-test-wait "eglot to connect" (lambda () (eglot-current-server)))
    (let ((server (eglot-current-server)))
      (redline-test-put :buffer-uri (plist-get (eglot--TextDocumentIdentifier) :uri))
      (redline-test-put :step "review")
      (redline-test-put :review (redline-test-review))
      (redline-test-wait "4 Flymake diagnostics" (lambda () (>= (length (flymake-diagnostics)) 4)))
      (redline-test-put :lines-reviewed (redline-test-lines))

      (redline-test-put :step "code actions")
      (goto-char (point-min))
      (forward-line 3)
      (let* ((actions (eglot-code-actions (point) (point)))
             (fix (cl-find-if (lambda (a) (string-prefix-p "Redline: apply fix" (plist-get a :title)))
                              actions)))
        (redline-test-put :action-titles (vconcat (mapcar (lambda (a) (plist-get a :title)) actions)))
        (when fix
          (eglot--apply-workspace-edit (plist-get fix :edit))
          (redline-test-send-changes)
          (let ((command (plist-get fix :command)))
            (when command
              (eglot-execute-command server (intern (plist-get command :command))
                                     (plist-get command :arguments))))
          (redline-test-put :import-left
                            (save-excursion (goto-char (point-min)) (forward-line 3)
                                            (buffer-substring-no-properties
                                             (line-beginning-position) (line-end-position))))
          (redline-test-put :lines-after-fix (redline-test-settle [20 26 30]))))

      (redline-test-put :step "an edit above the findings")
      (goto-char (point-min))
      (insert "# a new first line\n")
      (redline-test-send-changes)
      (redline-test-put :lines-after-edit (redline-test-settle [21 27 31]))

      (redline-test-put :step "review again")
      (redline-test-put :rerun (redline-test-review))
      (redline-test-put :lines-after-rerun (redline-test-settle [21 27 31]))
      (redline-test-put :modified (if (buffer-modified-p) t :json-false))

      (redline-test-put :step "a file opened after the review")
      (let ((extra (expand-file-name "app/extra.py" repo)))
        (let ((text (with-temp-buffer (insert-file-contents extra) (buffer-string))))
          (with-temp-file extra (insert "# on top\n# pulled: two new lines\n" text)))
        (find-file extra)
        (flymake-start)  ; from the command loop in an interactive Emacs
        (redline-test-put :extra-managed (if (eglot-current-server) t :json-false))
        (redline-test-put :lines-opened (redline-test-settle [5])))

      (redline-test-put :step "shutdown")
      (let ((kill-buffer-query-functions nil))
        (eglot-shutdown server))))
  (redline-test-put :step "done"))

(condition-case err
    (progn (redline-test-run) (redline-test-put :ok t))
  (error (redline-test-put :ok :json-false)
         (redline-test-put :error (error-message-string err))))
(with-temp-file (getenv "REDLINE_EMACS_OUT")
  (insert (json-encode redline-test-result)))
(kill-emacs 0)
