//! Record and XRPC types for the NSIDs swdesk reads and writes, generated from the lexicon JSON
//! in `lexicons/`, with lexicon validation and local record CIDs. No I/O.
