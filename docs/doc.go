// Package docs holds the project's documentation (Markdown) and the test that keeps it
// standing alone: every relative link resolves to a file of the repository, and no file
// refers to anything outside it.
package docs
