//! WARC reader. PLACEHOLDER — being implemented.
