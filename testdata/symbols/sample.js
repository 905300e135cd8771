// JavaScript fixture: classes, methods, arrow functions, function expressions, generators.

class Counter {
  constructor(start) {
    this.value = start;
  }

  increment() {
    this.value += 1;
    return this.value;
  }
}

function makeCounter() {
  return new Counter(0);
}

const double = (x) => x * 2;

const handler = function (event) {
  return double(event.value);
};

function* ids() {
  yield 1;
}

export default makeCounter;
