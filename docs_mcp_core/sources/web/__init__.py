"""Docs websites as sources: discovery (sitemap, llms.txt, crawl), polite conditional fetching,
HTML to Markdown, and staging each page as a Markdown file with its source URL."""
