"""Redline's language server and the editor-side logic it uses.

The pure modules here (tracking, document_findings, shifting, fixes, hover) have no pygls
dependency: positions are 0-based (line, character) with characters counted in Python str code
points; the server converts them to the client's negotiated position encoding.
"""
