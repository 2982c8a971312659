import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { BrowserRouter } from 'react-router';
import { Portal } from './Portal';
import '../styles.css';
import './portal.css';

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <BrowserRouter basename="/portal">
      <Portal />
    </BrowserRouter>
  </StrictMode>,
);
