// Java fixture: classes, nested classes, interfaces, enums, overloads, constructors,
// generics, records.
package sample;

public class Sample<T> {
    private final T value;

    public Sample(T value) {
        this.value = value;
    }

    public T get() {
        return value;
    }

    public int sum(int a, int b) {
        return a + b;
    }

    public double sum(double a, double b) {
        return a + b;
    }

    static class Node {
        void visit() {
            new Sample<String>("x").get();
        }
    }

    interface Listener {
        void onEvent(String name);
    }

    enum Mode { ON, OFF }

    record Pair(int left, int right) {}
}
