package postgres

// SearchText is the expression searched by QueryLinks, for the test that
// checks the trigram index serves it.
const SearchText = searchText
