// Go fixture: structs, interfaces, methods with receivers, generics, functions.
package sample

type Store struct {
	items []string
}

type Reader interface {
	Read() string
}

type ID int

func NewStore() *Store {
	return &Store{}
}

func (s *Store) Add(item string) {
	s.items = append(s.items, item)
}

func (s Store) Read() string {
	return s.items[0]
}

func Map[T any, U any](in []T, f func(T) U) []U {
	out := make([]U, 0, len(in))
	for _, v := range in {
		out = append(out, f(v))
	}
	return out
}
